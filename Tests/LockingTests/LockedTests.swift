import Foundation
import Locking
import Testing

@Suite struct LockedTests {
    struct Failure: Error {}

    /// Threads that update one value at the same time lose no update. (The same loop with the
    /// locking taken out lost about 1 % of them, on 2 cores: the count is large enough for the
    /// threads to meet.)
    @Test func concurrentUpdatesAreNeverLost() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<200_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 800_000)
    }

    /// An error thrown inside passes through, with the changes made before it kept, and the lock
    /// released: the next call does not wait forever.
    @Test func anErrorPassesThroughAndReleasesTheLock() {
        let value = Locked([1])
        #expect(throws: Failure.self) {
            try value.withLock { (array: inout [Int]) throws(Failure) in
                array.append(2)
                throw Failure()
            }
        }
        #expect(value.withLock { $0 } == [1, 2])
    }

    /// The value may be a type that cannot be copied, as with `Mutex`.
    @Test func holdsANoncopyableValue() {
        struct Token: ~Copyable { var uses = 0 }
        let token = Locked(Token())
        let uses = token.withLock { token in
            token.uses += 1
            return token.uses
        }
        #expect(uses == 1)
    }
}
