//! Runs a closure in a `fork()`'s child and answers the `i64` it wrote back (through a pipe);
//! `None` if the child died before it answered.

#![allow(dead_code)]

pub fn in_child(call: impl FnOnce() -> i64) -> Option<i64> {
    let mut pipe = [0; 2];
    // SAFETY: a pipe of two descriptors, for the child's answer.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    // SAFETY: the child calls `call`, writes to the pipe and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let bytes = call().to_le_bytes();
        // SAFETY: writes 8 bytes from a live buffer; `_exit` runs no destructor of the parent's.
        unsafe {
            libc::write(pipe[1], bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0);
        }
    }
    // SAFETY: closes the parent's copy of the write end, so a child that died closes the pipe.
    unsafe { libc::close(pipe[1]) };
    let mut bytes = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer; reaps the child.
    let read = unsafe { libc::read(pipe[0], bytes.as_mut_ptr().cast(), bytes.len()) };
    let mut status = 0;
    unsafe {
        libc::close(pipe[0]);
        libc::waitpid(pid, &mut status, 0);
    }
    (read == 8).then(|| i64::from_le_bytes(bytes))
}
