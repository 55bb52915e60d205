//! A trial's agent/ folder, opened once: its names listed with getdents64 on the open
//! descriptor, and its files opened relative to it.
//!
//! What `std::fs::read_dir` + opening each file by its full path cost per trial: opendir's
//! fstat and 32 KB buffer, and a walk of every component of the full path for each open
//! (the kernel's path lookup was ~5 % of the extractor's time). Linux on x86_64 / aarch64;
//! elsewhere the same interface goes through `std::fs`.

use std::fs::File;

/// An open agent/ folder (closed when dropped).
pub struct Dir {
    /// The folder's path as the caller built it: files whose path is `path/name` are
    /// opened relative to the descriptor.
    pub path: Vec<u8>,
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    fd: i32,
}

/// What opening a folder gave: its names (unsorted) and the folder, nothing (it does not
/// exist), or an error (anything else: not a folder, no permission, ...).
pub enum Listing {
    Names(Vec<Vec<u8>>, Dir),
    Missing,
    Error,
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod sys {
    use std::ffi::{c_char, c_int, c_long};

    extern "C" {
        pub fn openat(dirfd: c_int, path: *const c_char, flags: c_int, ...) -> c_int;
        pub fn close(fd: c_int) -> c_int;
        pub fn syscall(num: c_long, ...) -> c_long;
    }
    pub const AT_FDCWD: c_int = -100;
    pub const O_NONBLOCK: c_int = 0o4000; // a FIFO must not block the open
    pub const O_CLOEXEC: c_int = 0o2000000;
    #[cfg(target_arch = "x86_64")]
    pub const O_DIRECTORY: c_int = 0o200000;
    #[cfg(target_arch = "aarch64")]
    pub const O_DIRECTORY: c_int = 0o40000;
    #[cfg(target_arch = "x86_64")]
    pub const SYS_GETDENTS64: c_long = 217;
    #[cfg(target_arch = "aarch64")]
    pub const SYS_GETDENTS64: c_long = 61;
    pub const ENOENT: i32 = 2;
    pub const EINTR: i32 = 4;

    pub fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    /// `path` as a NUL-terminated string (None if it holds a NUL byte).
    pub fn c_path(path: &[u8]) -> Option<Vec<u8>> {
        if path.contains(&0) {
            return None;
        }
        let mut c = Vec::with_capacity(path.len() + 1);
        c.extend_from_slice(path);
        c.push(0);
        Some(c)
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
impl Drop for Dir {
    fn drop(&mut self) {
        unsafe { sys::close(self.fd) };
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub fn list(path: &[u8]) -> Listing {
    let Some(c) = sys::c_path(path) else {
        return Listing::Error;
    };
    let flags = sys::O_DIRECTORY | sys::O_CLOEXEC | sys::O_NONBLOCK;
    let fd = loop {
        let fd = unsafe { sys::openat(sys::AT_FDCWD, c.as_ptr().cast(), flags) };
        if fd >= 0 {
            break fd;
        }
        match sys::errno() {
            sys::EINTR => continue,
            sys::ENOENT => return Listing::Missing,
            _ => return Listing::Error,
        }
    };
    let dir = Dir {
        path: path.to_vec(),
        fd,
    };
    let mut names = Vec::new();
    // u64 words: the kernel writes 8-byte aligned linux_dirent64 records
    let mut buf = [0u64; 1024];
    loop {
        let got = unsafe {
            sys::syscall(
                sys::SYS_GETDENTS64,
                fd,
                buf.as_mut_ptr(),
                std::mem::size_of_val(&buf),
            )
        };
        if got == 0 {
            break;
        }
        if got < 0 {
            if sys::errno() == sys::EINTR {
                continue;
            }
            return Listing::Error;
        }
        // SAFETY: the kernel filled `got` bytes of `buf`
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), got as usize) };
        if !records(bytes, &mut names) {
            return Listing::Error;
        }
    }
    Listing::Names(names, dir)
}

/// The names of the linux_dirent64 records in `bytes` (d_ino u64, d_off i64, d_reclen u16,
/// d_type u8, d_name NUL-terminated), "." and ".." left out; false if malformed.
fn records(bytes: &[u8], names: &mut Vec<Vec<u8>>) -> bool {
    let mut at = 0;
    while at < bytes.len() {
        let Some(head) = bytes.get(at..at + 19) else {
            return false;
        };
        let reclen = u16::from_ne_bytes([head[16], head[17]]) as usize;
        let Some(rec) = bytes.get(at + 19..at + reclen) else {
            return false;
        };
        let name = &rec[..rec.iter().position(|&b| b == 0).unwrap_or(rec.len())];
        if name != b"." && name != b".." {
            names.push(name.to_vec());
        }
        if reclen == 0 {
            return false;
        }
        at += reclen;
    }
    true
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
impl Dir {
    /// Open file `name` of this folder for reading (None on any error).
    pub fn open(&self, name: &[u8]) -> Option<File> {
        use std::os::fd::FromRawFd;
        let c = sys::c_path(name)?;
        let flags = sys::O_CLOEXEC | sys::O_NONBLOCK;
        loop {
            let fd = unsafe { sys::openat(self.fd, c.as_ptr().cast(), flags) };
            if fd >= 0 {
                // SAFETY: a descriptor just opened, owned by the File from here on
                return Some(unsafe { File::from_raw_fd(fd) });
            }
            if sys::errno() != sys::EINTR {
                return None;
            }
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub fn list(path: &[u8]) -> Listing {
    use std::ffi::OsStr;
    use std::io::ErrorKind;
    use std::os::unix::ffi::OsStrExt;
    let mut names = Vec::new();
    match std::fs::read_dir(OsStr::from_bytes(path)) {
        Ok(rd) => {
            for e in rd {
                let Ok(e) = e else { return Listing::Error };
                names.push(e.file_name().as_bytes().to_vec());
            }
            Listing::Names(
                names,
                Dir {
                    path: path.to_vec(),
                },
            )
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Listing::Missing,
        Err(_) => Listing::Error,
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
impl Dir {
    pub fn open(&self, name: &[u8]) -> Option<File> {
        crate::io::open_file(&crate::paths::join(&self.path, name))
    }
}

#[cfg(test)]
mod tests {
    use super::{list, Listing};

    #[test]
    fn lists_and_opens_like_std() {
        let root = std::env::temp_dir().join(format!("ek-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let mut want: Vec<Vec<u8>> = Vec::new();
        for i in 0..300 {
            // more records than one getdents64 buffer holds
            let name = format!("file-{i:03}-{}.json", "x".repeat(i % 40));
            std::fs::write(root.join(&name), format!("{i}")).unwrap();
            want.push(name.into_bytes());
        }
        want.push(b"sub".to_vec());
        want.sort();
        let path = root.as_os_str().as_encoded_bytes();
        let Listing::Names(mut got, dir) = list(path) else {
            panic!("not listed")
        };
        got.sort();
        assert_eq!(got, want);
        let mut text = String::new();
        use std::io::Read;
        dir.open(b"file-007-xxxxxxx.json")
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "7");
        assert!(dir.open(b"nope.json").is_none());
        assert!(matches!(list(&[path, b"/nope"].concat()), Listing::Missing));
        let file = [path, b"/file-000-.json"].concat();
        assert!(matches!(list(&file), Listing::Error)); // not a folder
        drop(dir);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
