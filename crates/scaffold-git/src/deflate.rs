//! zlib streams (RFC 1950) of one deflate block (RFC 1951) with the fixed Huffman codes,
//! for the objects of `new`'s pack: what zlib's fastest level (zlib-ng's `deflate_quick`)
//! writes for small files, one hash probe per position. Pure.
//!
//! Why not zlib: it clears a 65,536-entry hash table for every stream, which for 2,000
//! objects of 2 KB was as much work as compressing them (BENCHMARKS.md, round two, fifth
//! step). Here the table is sized to the object, so clearing it costs what the object does.
//! Incompressible data is stored (uncompressed blocks) rather than grown by the fixed codes.

/// The shortest match worth a length/distance pair, the longest deflate has, and the
/// window a zlib header of `0x78` allows.
const MIN_MATCH: usize = 4;
const MAX_MATCH: usize = 258;
const MAX_DISTANCE: usize = 32_768;
/// The largest hash table: 2^15 entries cover the whole window.
const MAX_HASH_BITS: u32 = 15;
const MIN_HASH_BITS: u32 = 8;
/// A stored block holds at most this many bytes (its LEN is 16 bits).
const STORED_BLOCK: usize = 65_535;

const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DISTANCE_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// `code`'s `bits` low bits in reverse order: Huffman codes are sent most significant bit
/// first into a stream that is filled from the least significant bit (RFC 1951, 3.1.1).
const fn reversed(code: u32, bits: u32) -> u32 {
    let mut out = 0;
    let mut i = 0;
    while i < bits {
        out = (out << 1) | ((code >> i) & 1);
        i += 1;
    }
    out
}

/// The fixed literal/length code of each symbol 0..=287 (RFC 1951, 3.2.6), reversed, and
/// its length in bits.
const LITERAL_CODES: [(u16, u8); 288] = {
    let mut codes = [(0u16, 0u8); 288];
    let mut symbol = 0;
    while symbol < 288 {
        let s = symbol as u32;
        let (code, bits) = match s {
            0..=143 => (0x30 + s, 8),
            144..=255 => (0x190 + s - 144, 9),
            256..=279 => (s - 256, 7),
            _ => (0xc0 + s - 280, 8),
        };
        codes[symbol] = (reversed(code, bits) as u16, bits as u8);
        symbol += 1;
    }
    codes
};

/// The index into `LENGTH_BASE` of each match length 3..=258.
const LENGTH_INDEX: [u8; 259] = {
    let mut index = [0u8; 259];
    let mut length = 3;
    let mut code = 0;
    while length <= MAX_MATCH {
        while code + 1 < LENGTH_BASE.len() && LENGTH_BASE[code + 1] as usize <= length {
            code += 1;
        }
        index[length] = code as u8;
        length += 1;
    }
    index
};

const END_OF_BLOCK: usize = 256;

/// Compresses objects one after another, keeping its hash table's memory between them.
#[derive(Default)]
pub struct Deflater {
    /// Hash of four bytes → the last position they were seen at, or `EMPTY`.
    head: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

impl Deflater {
    /// Appends the zlib stream of `data` to `out`.
    pub fn zlib(&mut self, data: &[u8], out: &mut Vec<u8>) {
        // CMF 0x78: deflate with a 32 KiB window; FLG 0x01: the fastest level, and
        // 0x7801 is a multiple of 31 as the header check requires.
        out.extend_from_slice(&[0x78, 0x01]);
        let start = out.len();
        // Positions are kept in 32 bits: a larger object is stored.
        if u32::try_from(data.len()).is_ok_and(|len| len < EMPTY) {
            self.fixed_block(data, out);
        }
        if out.len() == start || out.len() - start > stored_size(data.len()) {
            out.truncate(start);
            stored_blocks(data, out);
        }
        out.extend_from_slice(&adler32(data).to_be_bytes());
    }

    fn fixed_block(&mut self, data: &[u8], out: &mut Vec<u8>) {
        let bits = data
            .len()
            .max(1)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(MIN_HASH_BITS, MAX_HASH_BITS);
        self.head.clear();
        self.head.resize(1 << bits, EMPTY);
        let hash = |at: usize| {
            let word = u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
            (word.wrapping_mul(0x9e37_79b1) >> (32 - bits)) as usize
        };
        let mut writer = BitWriter::new(out);
        writer.put(0b011, 3); // BFINAL = 1, BTYPE = 01 (fixed codes)
        let mut at = 0;
        while at < data.len() {
            if at + MIN_MATCH <= data.len() {
                let slot = hash(at);
                let candidate = self.head[slot];
                self.head[slot] = at as u32;
                if candidate != EMPTY {
                    let from = candidate as usize;
                    let distance = at - from;
                    if distance <= MAX_DISTANCE
                        && data[from..from + MIN_MATCH] == data[at..at + MIN_MATCH]
                    {
                        let longest = (data.len() - at).min(MAX_MATCH);
                        let mut length = MIN_MATCH;
                        while length < longest && data[from + length] == data[at + length] {
                            length += 1;
                        }
                        writer.length(length);
                        writer.distance(distance);
                        at += length;
                        continue;
                    }
                }
            }
            writer.symbol(usize::from(data[at]));
            at += 1;
        }
        writer.symbol(END_OF_BLOCK);
        writer.finish();
    }
}

/// The bytes `stored_blocks` writes for `len` bytes of data.
fn stored_size(len: usize) -> usize {
    len + 5 * len.div_ceil(STORED_BLOCK).max(1)
}

/// `data` as uncompressed blocks, the last one final.
fn stored_blocks(data: &[u8], out: &mut Vec<u8>) {
    let mut chunks = data.chunks(STORED_BLOCK).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last)); // BFINAL, BTYPE = 00, padded to the byte
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
}

/// Bits into bytes, least significant bit first.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    pending: u64,
    count: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter {
            out,
            pending: 0,
            count: 0,
        }
    }

    /// Each call puts at most 13 bits, so fewer than 32 pending always fit.
    fn put(&mut self, value: u32, bits: u32) {
        self.pending |= u64::from(value) << self.count;
        self.count += bits;
        if self.count >= 32 {
            self.out
                .extend_from_slice(&(self.pending as u32).to_le_bytes());
            self.pending >>= 32;
            self.count -= 32;
        }
    }

    fn symbol(&mut self, symbol: usize) {
        let (code, bits) = LITERAL_CODES[symbol];
        self.put(u32::from(code), u32::from(bits));
    }

    fn length(&mut self, length: usize) {
        let index = usize::from(LENGTH_INDEX[length]);
        self.symbol(257 + index);
        let extra = u32::from(LENGTH_EXTRA[index]);
        if extra > 0 {
            self.put((length - usize::from(LENGTH_BASE[index])) as u32, extra);
        }
    }

    fn distance(&mut self, distance: usize) {
        let code = distance_code(distance);
        // The 30 distance codes are 5 bits each, sent reversed like the others.
        self.put(reversed(code as u32, 5), 5);
        let extra = u32::from(DISTANCE_EXTRA[code]);
        if extra > 0 {
            self.put((distance - usize::from(DISTANCE_BASE[code])) as u32, extra);
        }
    }

    /// Writes what is pending, padded with zero bits to the byte.
    fn finish(self) {
        let bytes = self.count.div_ceil(8) as usize;
        self.out
            .extend_from_slice(&self.pending.to_le_bytes()[..bytes]);
    }
}

/// The distance code of 1..=32768: two codes per power of two above 4.
fn distance_code(distance: usize) -> usize {
    if distance <= 4 {
        return distance - 1;
    }
    let high = (usize::BITS - 1 - (distance - 1).leading_zeros()) as usize;
    2 * high + (((distance - 1) >> (high - 1)) & 1)
}

/// zlib's checksum (RFC 1950, 8.2).
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    // The most bytes summed before the sums must be reduced to stay within 32 bits.
    const RUN: usize = 5_552;
    let (mut a, mut b) = (1u32, 0u32);
    for run in data.chunks(RUN) {
        for &byte in run {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inflated(stream: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(stream), &mut out)
            .expect("a valid zlib stream");
        out
    }

    /// A pseudo-random byte sequence (xorshift), the same on every run.
    fn noise(len: usize, mut state: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }

    /// zlib reads back every input: the edges of the match rules (runs longer than the
    /// longest match, repeats at the window's edge and beyond it), every byte value, text,
    /// noise (stored, in several blocks) and scaffold's own blueprint files.
    #[test]
    fn zlib_inflates_what_it_deflates() {
        let block = noise(MAX_DISTANCE, 7);
        let mut at_window = block.clone();
        at_window.extend_from_slice(&block); // a repeat exactly 32,768 bytes back
        let mut past_window = noise(MAX_DISTANCE + 1, 9);
        past_window.extend_from_within(..300); // 32,769 back: too far
        let mut inputs: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"a".to_vec(),
            b"ab".to_vec(),
            b"abc".to_vec(),
            b"abcd".to_vec(),
            b"abcdabcd".to_vec(),
            (0..=255).collect(),
            vec![0; 200_000],
            b"ab".repeat(70_000),
            b"apiVersion: v1\nkind: ConfigMap\n".repeat(500),
            noise(200_000, 3),
            at_window,
            past_window,
        ];
        for length in [257, 258, 259, 515, 516] {
            let mut run = b"x".to_vec();
            run.extend(std::iter::repeat_n(b'y', length));
            inputs.push(run);
        }
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../blueprints/default");
        for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
            if entry.file_type().is_file() {
                inputs.push(std::fs::read(entry.path()).expect("a blueprint file"));
            }
        }
        let mut deflater = Deflater::default();
        for input in &inputs {
            let mut stream = vec![0xaa]; // appended to what is there
            deflater.zlib(input, &mut stream);
            assert_eq!(stream[0], 0xaa);
            assert_eq!(inflated(&stream[1..]), *input, "{} bytes", input.len());
            assert!(stream.len() - 1 <= stored_size(input.len()) + 6);
        }
    }

    #[test]
    fn text_is_compressed_and_noise_is_stored() {
        let mut deflater = Deflater::default();
        let text = b"kind: HelmRelease\nspec:\n  interval: 10m\n".repeat(50);
        let mut out = Vec::new();
        deflater.zlib(&text, &mut out);
        assert!(out.len() < text.len() / 10, "{} bytes", out.len());
        let noise = noise(100_000, 11);
        let mut out = Vec::new();
        deflater.zlib(&noise, &mut out);
        assert_eq!(out.len(), 2 + stored_size(noise.len()) + 4);
    }

    #[test]
    fn codes_follow_rfc_1951() {
        assert_eq!(LITERAL_CODES[0], (reversed(0b0011_0000, 8) as u16, 8));
        assert_eq!(LITERAL_CODES[255], (reversed(0b1_1111_1111, 9) as u16, 9));
        assert_eq!(LITERAL_CODES[256], (0, 7));
        assert_eq!(LITERAL_CODES[287], (reversed(0b1100_0111, 8) as u16, 8));
        assert_eq!(LENGTH_INDEX[3], 0);
        assert_eq!(LENGTH_INDEX[10], 7);
        assert_eq!(LENGTH_INDEX[11], 8);
        assert_eq!(LENGTH_INDEX[257], 27);
        assert_eq!(LENGTH_INDEX[258], 28);
        for distance in 1..=MAX_DISTANCE {
            let code = distance_code(distance);
            let base = usize::from(DISTANCE_BASE[code]);
            assert!(base <= distance && distance - base < 1 << DISTANCE_EXTRA[code]);
        }
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
    }
}
