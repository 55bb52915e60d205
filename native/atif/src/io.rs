//! Reading a file whole, within the size cap, in one read() when its size is known.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;

const O_NONBLOCK: i32 = 0o4000; // Linux (x86_64, aarch64): a FIFO must not block the open

/// Open a file for reading (O_NONBLOCK: a FIFO must not block the open); None on error.
pub(crate) fn open_file(path: &[u8]) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(OsStr::from_bytes(path))
        .ok()
}

/// Read a regular file within `cap` bytes into `buf` (replacing its content); false on
/// anything else (missing, FIFO, folder, too large, I/O error: the Python path reports it).
pub(crate) fn read_into(path: &[u8], cap: u64, buf: &mut Vec<u8>) -> bool {
    open_file(path).is_some_and(|f| read_file(f, cap, buf))
}

/// `read_into` for a file already open.
pub(crate) fn read_file(mut f: std::fs::File, cap: u64, buf: &mut Vec<u8>) -> bool {
    let Ok(md) = f.metadata() else { return false };
    if !md.is_file() || md.len() > cap {
        return false;
    }
    // one read() for the whole file (read_to_end starts small and grows: 4-5 calls for
    // 80 KB); a file that grew since fstat is read on up to cap
    let want = md.len() as usize + 1;
    buf.clear();
    buf.resize(want, 0);
    let mut got = 0;
    loop {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
        if got == want - 1 {
            break; // the size fstat gave: no read() only to see the end (a file written to
                   // while it is read is a snapshot either way)
        }
        if got == buf.len() {
            if got as u64 > cap {
                return false;
            }
            buf.resize((2 * got).min(cap as usize + 1).max(got + 1), 0);
        }
    }
    buf.truncate(got);
    got as u64 <= cap
}
