import Foundation

/// A value behind a lock, for state that threads and tasks share (a work counter, a progress bar's state).
///
/// Why not `Synchronization.Mutex`: on Linux its contended path locks with a `FUTEX_LOCK_PI` system call inside the
/// standard library, which the thread sanitizer does not see as an acquire, so a contended `Mutex` makes it report a
/// data race that is not one (it did, in `routekit import --jobs 3` under load). This lock is a `pthread_mutex_t`
/// (through `NSLock`), which the sanitizer understands, and costs the same when uncontended.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Puts `value` behind the lock.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value while holding the lock; `body` must not take the same lock again.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
