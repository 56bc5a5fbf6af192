//! The git layer's fault seam for the integration tests (`test-seams`, enabled by the
//! binary's feature of the same name through scaffold-core); a no-op in a shipped binary.

/// The seam of a write of git objects named `write` (attempt `attempt`, from 1):
/// `SCAFFOLD_TEST_LOST_OBJECT_DIR=WRITE:N[,WRITE:N…]` fails its first N attempts as libgit2
/// fails a loose-object write whose `objects/XX` directory a concurrent `git gc
/// --prune=now` removed after libgit2 created it (an OS-class error), so a test can make
/// that race happen every time.
pub fn test_object_write(write: &str, attempt: usize) -> Result<(), git2::Error> {
    #[cfg(feature = "test-seams")]
    {
        let fails = crate::process_env::var("SCAFFOLD_TEST_LOST_OBJECT_DIR").is_some_and(|spec| {
            spec.split(',').any(|item| {
                item.split_once(':').is_some_and(|(name, n)| {
                    name == write && n.parse::<usize>().is_ok_and(|n| attempt <= n)
                })
            })
        });
        if fails {
            return Err(git2::Error::new(
                git2::ErrorCode::GenericError,
                git2::ErrorClass::Os,
                "failed to create temporary file 'objects/00/tmp_object_git2_x': No such file or directory (injected)",
            ));
        }
    }
    let _ = (write, attempt);
    Ok(())
}
