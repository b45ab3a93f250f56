//! Real file systems that refuse writes, for tests: a small tmpfs mounted for one test and filled
//! to its last page, or mounted read-only (which stops root, where chmod would not); unmounted
//! when dropped. Mounting needs root (CI runs as root); elsewhere the constructors print why
//! they cannot and return `None`, and the test skips, saying so.

use std::io::Write;
use std::path::Path;
use std::process::Command;

pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs of `kib` KiB, empty (call [`Tmpfs::fill`] once the test's files are in place).
    pub fn mount(test: &str, kib: u32) -> Option<Tmpfs> {
        Tmpfs::mount_with(test, &format!("size={kib}k,mode=0755"))
    }

    /// An empty read-only tmpfs: creating anything in it fails with EROFS, even for root.
    pub fn read_only(test: &str) -> Option<Tmpfs> {
        Tmpfs::mount_with(test, "size=64k,ro")
    }

    fn mount_with(test: &str, options: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", options, "tmpfs"]).arg(dir.path()).output();
        match mounted {
            Ok(out) if out.status.success() => Some(Tmpfs { dir }),
            Ok(out) => {
                let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
                eprintln!("SKIPPED {test}: cannot mount a tmpfs (needs root): {why}");
                None
            }
            Err(e) => {
                eprintln!("SKIPPED {test}: cannot run `mount`: {e}");
                None
            }
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes one file until the file system says it is full.
    pub fn fill(&self) {
        let mut filler = std::fs::File::create(self.path().join(".filler")).unwrap();
        let chunk = vec![b'x'; 4096];
        loop {
            match filler.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(28), "expected ENOSPC, got {e}");
                    break;
                }
            }
        }
        // Whatever page is left half-used belongs to the filler: a new file gets nothing.
        assert!(std::fs::write(self.path().join(".probe"), "x").is_err(), "the disk is not full");
        let _ = std::fs::remove_file(self.path().join(".probe"));
    }

    /// Makes room again (as a user would after the failure).
    pub fn free(&self) {
        std::fs::remove_file(self.path().join(".filler")).unwrap();
    }

    /// Names in `dir` (relative to the mount), sorted, the filler left out.
    pub fn names(&self, dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".filler")
            .collect();
        names.sort();
        names
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}
