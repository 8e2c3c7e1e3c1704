//! A fresh folder for one test's files, removed when the test ends; a failed test's is kept and
//! its path printed, to look at.
use std::ops::Deref;
use std::path::Path;

pub struct Scratch(Option<tempfile::TempDir>);

impl Scratch {
    /// A new empty folder under the system's temporary folder, named `stagewise-NAME-…`.
    pub fn new(name: &str) -> Scratch {
        let d = tempfile::Builder::new()
            .prefix(&format!("stagewise-{name}-"))
            .tempdir()
            .expect("a temporary folder");
        Scratch(Some(d))
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.as_ref().expect("a live folder").path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(d) = self.0.take()
        {
            eprintln!("kept the failed test's files: {}", d.keep().display());
        }
    }
}
