/// How far ahead of its use a sequence number (an activity's track `seq` or envelope `seq`) is
/// reserved on the storage device: a pure value, tested as a table.
///
/// A number that reached the broker must never be used again, even after a power cut that
/// took the last seconds of writes. Writing the number down before every publish costs a flush
/// per fix; instead the agent writes, from time to time, a number ahead of what it uses (the
/// reservation) and, after a power cut, goes on after the reservation: a gap in the sequence,
/// never a repeat. The reservation is renewed while plenty is left, so publishing never waits:
/// it reaches ``horizon`` seconds of use at the recent rate (at least ``minimumBlock`` numbers),
/// and is renewed once less than ``headroom`` seconds of use are left (at least a quarter of the
/// minimum block). Only a burst faster than the renewal's own write uses it up, and then
/// ``covers(_:)`` is false until the renewal is on the device.
public struct SeqReservation: Hashable, Sendable {
    /// The least a reservation reaches ahead of the number in use.
    public static let minimumBlock = 64
    /// How many seconds of use at the recent rate a reservation covers: two minutes.
    public static let horizon: Double = 120
    /// How many seconds of use left make a reservation due for renewal.
    public static let headroom: Double = 30

    /// The highest number reserved on the device: after a power cut, numbering goes on after it.
    public private(set) var durable: Int
    /// The recent rate of use, numbers a second.
    public private(set) var rate: Double = 0
    private var lastUsed: Int
    private var lastTime: Double?

    /// A reservation through `durable`, of which `used` is in use now.
    public init(durable: Int, used: Int) {
        self.durable = durable
        lastUsed = used
    }

    /// Whether `seq` may be published now: a power cut after it cannot make it reused.
    public func covers(_ seq: Int) -> Bool { seq <= durable }

    /// Takes the number in use at `time` (seconds on any steady clock), to follow the rate.
    public mutating func observe(used: Int, at time: Double) {
        if let lastTime, time - lastTime >= 1 {
            let recent = Double(max(0, used - lastUsed)) / (time - lastTime)
            // The faster of the recent rate and a slowly decaying memory of a faster one.
            rate = max(recent, rate * 0.5)
            lastUsed = used
            self.lastTime = time
        } else if lastTime == nil {
            lastUsed = used
            lastTime = time
        }
    }

    /// Whether the reservation should be renewed now that `used` is in use.
    public func needsRenewal(used: Int) -> Bool {
        durable - used < max(Self.minimumBlock / 4, Int((rate * Self.headroom).rounded(.up)))
    }

    /// The reservation to write now that `used` is in use.
    public func renewal(used: Int) -> Int {
        used + max(Self.minimumBlock, Int((rate * Self.horizon).rounded(.up)))
    }

    /// The renewal through `target` is on the device.
    public mutating func renewed(through target: Int) {
        durable = max(durable, target)
    }
}
