//! A SQLite VFS for the writer's connection that writes a commit's log frames in two calls.
//!
//! SQLite writes each frame of its write-ahead log in two calls, the frame's 24-byte header,
//! then its page. A commit of a round of sends writes some twenty frames, so forty `pwrite`s,
//! and on a virtual machine a system call costs microseconds whatever its size: the writer
//! thread spent nearly half its time in the kernel (0.73 s of 1.61 s for 100 000 sends).
//!
//! This VFS is the default one (`unix`) for every file but the log, whose writes it holds
//! while they follow one another and writes together:
//! - with a commit frame's header (a frame's header holds the database's size after a
//!   commit frame, and zero in every other frame), and then that frame's page at once: two
//!   calls a commit rather than two a frame. The header is not held for its page, because
//!   SQLite also writes a commit frame's header alone, with nothing after it before the
//!   commit is published, when it rewrites the checksums of frames it overwrote within the
//!   transaction;
//! - before any other call on the log: a read, a sync, a size, a truncation, a file control,
//!   or a write that does not follow the last;
//! - past [`LIMIT`] bytes held, and when the log is closed.
//!
//! The log is also written by the other connections of the store's pool (heartbeats, push
//! configs, retention), each in turn under SQLite's write lock. So nothing may stay held once
//! the writer's transaction ends, committed or not: held bytes written later would land on
//! frames another connection committed meanwhile. Two things make sure of it:
//! - the connection never spills (`PRAGMA cache_spill = OFF`, set by [`open`] after any
//!   other pragma, so that none undoes it): SQLite then
//!   writes frames only when it commits, not in the middle of a transaction, so a
//!   transaction rolled back wrote nothing to the log. (A rollback does not call the log at
//!   all, so anything held would have stayed held.) A round's dirty pages are bounded by its
//!   events, which the writer holds in memory anyway;
//! - a commit's writes end with the commit frame's page, written at once.
//!
//! What SQLite sees is then unchanged:
//! - the order of the bytes in the file: a write that does not follow the held ones writes
//!   them first;
//! - what readers see: another connection reads a frame only once the commit has published
//!   it in the shared index, which SQLite does after the commit frame's page is written, so
//!   after this has written it;
//! - a crash: a commit returns only after its frames were written to the file, and frames
//!   of a commit under way that were held and lost were never part of a commit;
//! - an error: a write that fails reports its error to the call that wrote, and SQLite
//!   fails that commit. (An earlier held write reported success; its commit fails all the
//!   same, and the log's checksums make recovery ignore what it left.)
//!
//! A sync that finds frames held (not the log's header alone, written as the log starts
//! over) turns holding off for good, so every write then goes straight through. SQLite
//! syncs a log with frames of a commit under way only under `synchronous = FULL` on a file
//! system without power-safe overwrites, where it may split a frame around the sync point;
//! the store runs `synchronous = NORMAL`.
//!
//! Only the writer's connection opens its database with this VFS (`a2a-wal-log`); the pool
//! and the checkpointer use the default VFS.
//!
//! This is the store's only `unsafe` code: a VFS is a table of C functions over memory that
//! SQLite allocates.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The VFS's name, as SQLite registers it and as `Connection::open_with_flags_and_vfs` takes it.
const NAME_C: &CStr = c"a2a-wal-log";
const NAME: &str = match NAME_C.to_str() {
    Ok(name) => name,
    Err(_) => panic!("the VFS's name is ASCII"),
};

/// The size of a frame's header in the log.
const FRAME_HEADER: c_int = 24;

/// The size of the log's own header, at its start.
const LOG_HEADER: usize = 32;

/// Held bytes past which they are written whatever comes next.
const LIMIT: usize = 1 << 20;

/// The most the default VFS writes in one call: it masks a longer length to 17 bits.
const MAX_WRITE: usize = 0x1ffff;

/// The default VFS, which every call but the log's writes goes to.
struct DefaultVfs(*mut ffi::sqlite3_vfs);

// SAFETY: the default VFS is a static object of SQLite's, meant to be used from any thread.
unsafe impl Send for DefaultVfs {}
// SAFETY: as above; this only reads it.
unsafe impl Sync for DefaultVfs {}

static DEFAULT: OnceLock<Option<DefaultVfs>> = OnceLock::new();

/// Opens the writer's connection to `path` through this VFS and runs `pragmas` on it, then
/// turns spilling off, which this VFS needs whatever they say (see the module's doc).
/// Through the default VFS, with `pragmas` alone, if this one could not be registered.
pub(super) fn open(path: &str, pragmas: &[&str]) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::{Connection, OpenFlags};
    let registered = register();
    let conn = if registered {
        Connection::open_with_flags_and_vfs(path, OpenFlags::default(), NAME)?
    } else {
        Connection::open(path)?
    };
    for pragma in pragmas {
        conn.execute_batch(pragma)?;
    }
    if registered {
        conn.execute_batch("PRAGMA cache_spill = OFF;")?;
    }
    Ok(conn)
}

/// Registers the VFS, once; false (and a warning, once) if SQLite has no default VFS or
/// refused it.
fn register() -> bool {
    DEFAULT
        .get_or_init(|| {
            let registered = register_now();
            if registered.is_none() {
                tracing::warn!(
                    "SQLite refused the log-writing VFS: the writer writes its log through the default one"
                );
            }
            registered
        })
        .is_some()
}

/// Registers a copy of the default VFS whose `xOpen` is [`open_file`]; returns the default.
fn register_now() -> Option<DefaultVfs> {
    // SAFETY: `sqlite3_vfs_find(NULL)` returns SQLite's default VFS, which lives as
    // long as the process; the copy leaked here does too, as SQLite requires of a
    // registered VFS. Every method but `xOpen` is the default one's, with its
    // `pAppData`; `unix`'s methods other than `xOpen` do not read the VFS they get.
    unsafe {
        let default = ffi::sqlite3_vfs_find(std::ptr::null());
        if default.is_null() {
            return None;
        }
        let mut vfs: ffi::sqlite3_vfs = *default;
        vfs.szOsFile = std::mem::size_of::<LogFile>() as c_int + (*default).szOsFile;
        vfs.pNext = std::ptr::null_mut();
        vfs.zName = NAME_C.as_ptr();
        vfs.xOpen = Some(open_file);
        let vfs = Box::leak(Box::new(vfs));
        (ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK).then_some(DefaultVfs(default))
    }
}

/// An open log: SQLite's file object (first, as SQLite casts it), then the default VFS's
/// file, which SQLite allocated right after this (`szOsFile` covers both).
#[repr(C)]
struct LogFile {
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
    /// Bytes written by SQLite and not yet to the file, from `start`.
    held: Vec<u8>,
    start: i64,
    /// The last write was a commit frame's header: the next (its page) is written at once.
    commit_header: bool,
    /// Every write goes straight through (see the module's doc).
    passthrough: bool,
}

// The default VFS's file follows a `LogFile` in SQLite's 8-aligned allocation.
const _: () = assert!(std::mem::size_of::<LogFile>().is_multiple_of(8));

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// `xOpen`: the log as a [`LogFile`] over the default VFS's file; any other file is the
/// default VFS's own, in the space SQLite gave.
unsafe extern "C" fn open_file(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(Some(DefaultVfs(default))) = DEFAULT.get() else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: `file` points at `szOsFile` bytes, 8-aligned, which SQLite allocated: room for
    // a `LogFile` (whose size is a multiple of 8) and the default VFS's file after it.
    unsafe {
        let Some(default_open) = (**default).xOpen else {
            return ffi::SQLITE_ERROR;
        };
        if flags & ffi::SQLITE_OPEN_WAL == 0 {
            return default_open(*default, name, file, flags, out_flags);
        }
        let inner = file
            .cast::<u8>()
            .add(std::mem::size_of::<LogFile>())
            .cast::<ffi::sqlite3_file>();
        (*inner).pMethods = std::ptr::null();
        let rc = default_open(*default, name, inner, flags, out_flags);
        if rc != ffi::SQLITE_OK {
            // SQLite closes only what `file` says is open: the inner file, if its open went
            // far enough to need closing, is closed here.
            if let Some(close) = (*inner).pMethods.as_ref().and_then(|m| m.xClose) {
                close(inner);
            }
            (*file).pMethods = std::ptr::null();
            return rc;
        }
        file.cast::<LogFile>().write(LogFile {
            base: ffi::sqlite3_file { pMethods: &METHODS },
            inner,
            held: Vec::new(),
            start: 0,
            commit_header: false,
            passthrough: false,
        });
        ffi::SQLITE_OK
    }
}

/// The [`LogFile`] SQLite calls a method of.
///
/// # Safety
/// `file` is a log opened by [`open_file`] and not yet closed; SQLite calls one method of a file
/// at a time.
unsafe fn log<'a>(file: *mut ffi::sqlite3_file) -> &'a mut LogFile {
    // SAFETY: as the function's contract says.
    unsafe { &mut *file.cast::<LogFile>() }
}

impl LogFile {
    /// The default VFS's methods of the inner file.
    fn inner_methods(&self) -> &ffi::sqlite3_io_methods {
        // SAFETY: the inner file was opened (its `pMethods` set) before this was made, and is
        // closed only with it.
        unsafe { &*(*self.inner).pMethods }
    }

    /// Writes what is held, in calls the default VFS takes whole.
    fn flush(&mut self) -> c_int {
        let write = self.inner_methods().xWrite;
        let mut rc = ffi::SQLITE_OK;
        let mut offset = self.start;
        for chunk in self.held.chunks(MAX_WRITE) {
            let Some(write) = write else {
                rc = ffi::SQLITE_IOERR_WRITE;
                break;
            };
            // SAFETY: `chunk` is alive for the call; the inner file is open.
            rc = unsafe {
                write(
                    self.inner,
                    chunk.as_ptr().cast(),
                    chunk.len() as c_int,
                    offset,
                )
            };
            #[cfg(test)]
            tests::WRITES.with(|w| w.set(w.get() + 1));
            if rc != ffi::SQLITE_OK {
                break;
            }
            offset += chunk.len() as i64;
        }
        self.held.clear();
        if self.held.capacity() > 2 * LIMIT {
            self.held = Vec::new();
        }
        rc
    }
}

/// Calls `$method` of the inner file with `$args`, after writing what is held if `$flush`.
macro_rules! forward {
    ($file:ident, $method:ident, flush, $($arg:expr),*) => {{
        // SAFETY: see `log`.
        let log = unsafe { log($file) };
        let rc = log.flush();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        forward!(@call log, $method, $($arg),*)
    }};
    ($file:ident, $method:ident, $($arg:expr),*) => {{
        // SAFETY: see `log`.
        let log = unsafe { log($file) };
        forward!(@call log, $method, $($arg),*)
    }};
    (@call $log:ident, $method:ident, $($arg:expr),*) => {
        match $log.inner_methods().$method {
            // SAFETY: the default VFS's method, on its open file, with SQLite's arguments.
            Some(method) => unsafe { method($log.inner, $($arg),*) },
            None => ffi::SQLITE_IOERR,
        }
    };
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: see `log`.
    let log = unsafe { log(file) };
    if log.passthrough {
        return forward!(@call log, xWrite, buf, amt, offset);
    }
    if !log.held.is_empty() && offset != log.start + log.held.len() as i64 {
        let rc = log.flush();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    if log.held.is_empty() {
        log.start = offset;
    }
    // SAFETY: SQLite passes `amt` readable bytes at `buf`, for the call.
    let data = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), amt.max(0) as usize) };
    log.held.extend_from_slice(data);
    // Bytes 4–7 of a frame's header: the database's size in pages after a commit frame, else
    // zero.
    let commit_header = amt == FRAME_HEADER && data[4..8] != [0; 4];
    let ends = log.commit_header || commit_header || log.held.len() > LIMIT;
    log.commit_header = commit_header;
    if ends { log.flush() } else { ffi::SQLITE_OK }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: see `log`; after this SQLite makes no call on the file.
    let log = unsafe { log(file) };
    let flushed = log.flush();
    let closed = forward!(@call log, xClose,);
    // SAFETY: the buffer is dropped once, here; the file is not used again.
    unsafe {
        std::ptr::drop_in_place(&mut log.held);
        (*file).pMethods = std::ptr::null();
    }
    if flushed != ffi::SQLITE_OK {
        flushed
    } else {
        closed
    }
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    offset: i64,
) -> c_int {
    forward!(file, xRead, flush, buf, amt, offset)
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    forward!(file, xTruncate, flush, size)
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: see `log`.
    let log = unsafe { log(file) };
    // Frames held at a sync: a commit under `synchronous = FULL`. Not the log's header alone
    // (synced as the log starts over), nor nothing (a checkpoint's sync).
    if !(log.held.is_empty() || (log.start == 0 && log.held.len() == LOG_HEADER)) {
        log.passthrough = true;
    }
    forward!(file, xSync, flush, flags)
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    forward!(file, xFileSize, flush, size)
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(file, xLock, level)
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(file, xUnlock, level)
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    forward!(file, xCheckReservedLock, out)
}

unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    forward!(file, xFileControl, flush, op, arg)
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xSectorSize,)
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    forward!(file, xDeviceCharacteristics,)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use rusqlite::Connection;

    thread_local! {
        /// Writes this thread's logs made to their files.
        pub(super) static WRITES: Cell<u64> = const { Cell::new(0) };
    }

    fn writes() -> u64 {
        WRITES.with(Cell::get)
    }

    /// Rows of `n` bytes each, `count` of them, in one transaction.
    fn insert(conn: &Connection, count: usize, n: usize, first: usize) {
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..count {
            tx.execute(
                "INSERT INTO t (id, body) VALUES (?1, zeroblob(?2))",
                ((first + i) as i64, n as i64),
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }

    fn seen(conn: &Connection) -> (i64, i64) {
        conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(length(body)), 0) FROM t",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    /// A new database file, and the writer's connection to it as the store opens it.
    fn database() -> (String, Connection) {
        let url = crate::test_util::sqlite_url();
        let path = url.trim_start_matches("sqlite:").to_owned();
        let writer = super::open(&path, &[crate::SQLITE_PRAGMAS]).unwrap();
        writer
            .execute_batch(
                "PRAGMA wal_autocheckpoint=0; CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB);",
            )
            .unwrap();
        (path, writer)
    }

    fn integrity(conn: &Connection) -> String {
        conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap()
    }

    /// The files as a crash would leave them, copied without the shared index (so the copy
    /// recovers from the log alone, checking every frame's checksum), and what it holds.
    fn recovered(path: &str) -> (i64, i64) {
        let copy = crate::test_util::sqlite_url()
            .trim_start_matches("sqlite:")
            .to_owned();
        std::fs::copy(path, &copy).unwrap();
        std::fs::copy(format!("{path}-wal"), format!("{copy}-wal")).unwrap();
        let conn = Connection::open(&copy).unwrap();
        assert_eq!(integrity(&conn), "ok");
        seen(&conn)
    }

    #[test]
    fn a_transaction_rolled_back_leaves_nothing_to_land_on_another_connections_commit() {
        let (path, writer) = database();
        let other = Connection::open(&path).unwrap();
        insert(&writer, 1, 100, 0);

        // A round larger than the page cache, rolled back: were it spilled to the log and
        // held, its frames would be written later over the other connection's commit. (With
        // the log emptied first, the rollback reads no page back from it, which would have
        // written them at once.)
        writer
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        writer.execute_batch("PRAGMA cache_size=8").unwrap();
        let tx = writer.unchecked_transaction().unwrap();
        for i in 1..200 {
            tx.execute("INSERT INTO t (id, body) VALUES (?1, zeroblob(3000))", [i])
                .unwrap();
        }
        tx.rollback().unwrap();

        insert(&other, 3, 500, 1000);
        // The writer reads, then commits again: anything held would be written now.
        assert_eq!(seen(&writer), (4, 1600));
        insert(&writer, 2, 700, 2000);

        let expected = (6, 3000);
        assert_eq!(seen(&other), expected);
        assert_eq!(recovered(&path), expected);
    }

    #[test]
    fn a_commit_is_written_in_a_few_calls_and_seen_whole_by_another_connection() {
        let (path, writer) = database();
        let reader = Connection::open(&path).unwrap();

        // Sixty pages in one commit: the frames and the commit frame's header in calls of up
        // to 128 KiB, then its page; not two calls a frame.
        let before = writes();
        insert(&writer, 60, 3000, 0);
        let made = writes() - before;
        assert!(
            (2..=4).contains(&made),
            "{made} writes for a commit of 60 pages"
        );
        assert_eq!(seen(&reader), (60, 60 * 3000));

        // Commits small and large (past the 1 MiB held at most), each seen whole at once.
        let mut rows = 60;
        let mut bytes = 60 * 3000;
        for (count, n) in [(1, 10), (3, 5000), (400, 4000), (1, 3_000_000), (20, 100)] {
            insert(&writer, count, n, rows as usize);
            rows += count as i64;
            bytes += (count * n) as i64;
            assert_eq!(
                seen(&reader),
                (rows, bytes),
                "after {count} rows of {n} bytes"
            );
        }

        // The log copied into the database and started over: the writes go on after it.
        writer
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        insert(&writer, 5, 5000, rows as usize);
        rows += 5;
        bytes += 25_000;
        assert_eq!(seen(&reader), (rows, bytes));

        // A transaction larger than the writer's page cache spills frames to the log before
        // its commit, then changes pages it spilled: SQLite overwrites those frames in place
        // and rewrites the checksums of the frames after them, the commit frame's header
        // last, with no page after it.
        // (The store's writer never spills; the VFS writes such a commit right all the same.)
        writer
            .execute_batch("PRAGMA cache_size=8; PRAGMA cache_spill=ON")
            .unwrap();
        let tx = writer.unchecked_transaction().unwrap();
        for i in 0..100 {
            tx.execute(
                "INSERT INTO t (id, body) VALUES (?1, zeroblob(3000))",
                [rows + i],
            )
            .unwrap();
        }
        tx.execute("UPDATE t SET body = zeroblob(10) WHERE id >= ?1", [rows])
            .unwrap();
        tx.commit().unwrap();
        rows += 100;
        bytes += 1000;
        assert_eq!(seen(&reader), (rows, bytes));

        // What the files hold now, as a crash would leave them (the shared index left behind,
        // so the copy recovers from the log alone, checking every frame's checksum): every
        // commit, the last included, was written before it returned.
        assert_eq!(recovered(&path), (rows, bytes));

        drop(writer);
        drop(reader);
        let reopened = Connection::open(&path).unwrap();
        assert_eq!(seen(&reopened), (rows, bytes));
        assert_eq!(integrity(&reopened), "ok");
    }
}
