import AsyncSupport
import Dispatch
import Glibc
import Locking
import Synchronization

extension NetworkLoop {
    /// A connection's traffic on an ``AsyncSupport/EventLoop`` of the client's user, while the
    /// network thread waits: the loop watches the broker's socket, reads and writes through
    /// libmosquitto (`mosquitto_loop_read`, `_write`, `_misc`), and writes a packet queued on its
    /// own thread in the same turn. The agent hands its MQTT client the loop that runs its spool and
    /// drainer, so that a track point goes from the spool to the socket without waking another
    /// thread (issue 24; libmosquitto's own loop is woken for each packet through a socket pair).
    ///
    /// Only a complete connection is pumped here: the network thread connects (name lookup, TCP,
    /// TLS handshake, CONNACK) and resubscribes with libmosquitto's own loop, hands the connection
    /// over (``run()``), and takes it back when it ends or the client stops, to disconnect or
    /// connect again. The handle stays in threaded mode, so other threads may still queue packets
    /// (under the gate): ``packetsQueued()`` then has them written on the loop.
    final class Pump: @unchecked Sendable {
        private let handle: MosquittoHandle
        private let loop: EventLoop
        /// How often the keep-alive is checked when nothing else happens (a third of the keep-alive).
        private let keepAliveCheck: Duration
        /// Whether the connection is on the loop: read by other threads, which then hand it a flush.
        private let attached = Atomic<Bool>(false)
        private let flushScheduled = Atomic<Bool>(false)
        private let stopRequested = Atomic<Bool>(false)
        private let ended = DispatchSemaphore(value: 0)
        private let outcome = Locked<MosquittoStatus?>(nil)

        // The loop's thread only.
        private var active = false
        private var descriptor: Int32 = -1
        private var watch: EventLoop.Watch?
        private var timer: EventLoop.Timer?

        init(handle: MosquittoHandle, loop: EventLoop, keepAliveCheck: Duration) {
            self.handle = handle
            self.loop = loop
            self.keepAliveCheck = keepAliveCheck
        }

        /// The network thread's: hands the connection to the loop and waits until it ends there
        /// (or the client stops: ``requestStop()``); returns how it ended.
        func run() -> MosquittoStatus {
            attached.store(true, ordering: .sequentiallyConsistent)
            loop.execute { [self] in attach() }
            ended.wait()
            return outcome.withLock { $0.take() } ?? MosquittoStatus.noConnection
        }

        /// Any thread: ends the pumping, so that the network thread takes the connection back.
        func requestStop() {
            stopRequested.store(true, ordering: .sequentiallyConsistent)
            loop.execute { [self] in end(.success) }
        }

        /// Any thread, after a call that queued packets (under the gate): has them written.
        func packetsQueued() {
            guard attached.load(ordering: .sequentiallyConsistent) else { return }
            // From the loop's own thread (inside a callback, perhaps) the flush waits for the end
            // of the turn: libmosquitto's callbacks hold its mutexes, which a write takes again.
            if !flushScheduled.exchange(true, ordering: .acquiringAndReleasing) {
                loop.execute { [self] in flush() }
            }
        }

        // MARK: The loop's thread

        private func attach() {
            active = true
            descriptor = handle.socket
            guard !stopRequested.load(ordering: .sequentiallyConsistent) else { return end(.success) }
            guard descriptor >= 0 else { return end(.noConnection) }
            watch = loop.watch(descriptor, events: interest) { [self] revents in ready(revents) }
            armKeepAlive()
            // The packets queued before the hand-over (the resubscription, publishes meanwhile).
            flush()
        }

        private var interest: Int16 {
            Int16(POLLIN) | Self.readHangUp | (handle.wantsWrite ? Int16(POLLOUT) : 0)
        }

        /// `POLLRDHUP` (Linux, `_GNU_SOURCE`; not imported into Swift): the peer closed its side
        /// (on TCP a FIN, which alone shows as `POLLIN`; a unix socket shows `POLLHUP` too).
        private static let readHangUp = Int16(0x2000)

        private func ready(_ revents: Int16) {
            guard active else { return }
            if revents & (Int16(POLLIN | POLLERR | POLLHUP) | Self.readHangUp) != 0 {
                // The broker closed: everything it sent first, its DISCONNECT's reason among it.
                let closed = revents & (Int16(POLLHUP) | Self.readHangUp) != 0
                guard proceed(handle.read(ahead: closed)) else { return }
            }
            // What the read queued (a PUBREL for a PUBREC, a PUBACK) goes at once: the socket
            // almost always takes it, which saves a round of the loop for its POLLOUT.
            if revents & Int16(POLLOUT) != 0 || handle.wantsWrite {
                guard proceed(handle.write()) else { return }
            }
            // As libmosquitto's own loop does after each round.
            guard proceed(handle.keepAlive()) else { return }
            updateInterest()
        }

        private func flush() {
            flushScheduled.store(false, ordering: .sequentiallyConsistent)
            guard active else { return }
            if handle.wantsWrite {
                guard proceed(handle.write()) else { return }
            }
            updateInterest()
        }

        private func armKeepAlive() {
            timer = loop.schedule(after: keepAliveCheck) { [self] in
                timer = nil
                guard active, proceed(handle.keepAlive()) else { return }
                updateInterest()
                armKeepAlive()
            }
        }

        /// Whether the connection goes on after a call that returned `status`; if not, ends the
        /// pumping with it (libmosquitto closes the socket when the connection ends).
        private func proceed(_ status: MosquittoStatus) -> Bool {
            guard status.isSuccess else {
                end(status)
                return false
            }
            guard handle.socket == descriptor else {
                end(.noConnection)
                return false
            }
            return true
        }

        private func updateInterest() {
            if let watch { loop.setEvents(watch, interest) }
        }

        private func end(_ status: MosquittoStatus) {
            guard active else { return }
            active = false
            if let watch { loop.unwatch(watch) }
            if let timer { loop.cancel(timer) }
            watch = nil
            timer = nil
            attached.store(false, ordering: .sequentiallyConsistent)
            outcome.withLock { $0 = status }
            ended.signal()
        }
    }
}
