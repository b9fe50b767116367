import Foundation
import Testing
import Tracking

/// The wall clock judged against the receiver's fix times (fault scenario 7), as a table: each row
/// is the clock's offset from the fix time when a fix arrives, then whether the report changed
/// and the offset reported.
struct ClockCheckTests {
    @Test(arguments: [
        // offsets of successive fixes (s) -> whether each changed the report, the offset reported after each
        ([0.4, -2, 29], [false, false, false], [nil, nil, nil] as [Int?]),
        ([3600.2, 3601, 3585], [true, false, false], [3600, 3600, 3600]),
        ([3600, -3600, 0.5], [true, true, true], [3600, -3600, nil]),
        ([-1_795_370_000, -1_795_369_999], [true, false], [-1_795_370_000, -1_795_370_000]),
        ([31, 30, 31], [true, true, true], [31, nil, 31]),
        ([45, 80], [true, true], [45, 80]),
    ])
    func reportsAClockThatDisagreesWithTheReceiver(offsets: [Double], changes: [Bool], reported: [Int?]) {
        var check = ClockCheck()
        let fixTime = Date(timeIntervalSince1970: 1_795_370_000)
        var changed: [Bool] = []
        var offsetsReported: [Int?] = []
        for offset in offsets {
            changed.append(check.observe(fixTime: fixTime, now: fixTime.addingTimeInterval(offset)))
            offsetsReported.append(check.reportedOffset)
        }
        #expect(changed == changes)
        #expect(offsetsReported == reported)
    }

    @Test func aDamagedFixTimeIsNoClockOffset() {
        var check = ClockCheck()
        let now = Date(timeIntervalSince1970: 1_795_370_000)
        let farBack = check.observe(fixTime: Date(timeIntervalSince1970: -1e300), now: now)
        let notANumber = check.observe(fixTime: Date(timeIntervalSince1970: .nan), now: now)
        #expect(!farBack && !notANumber)
        #expect(check.reportedOffset == nil)
    }
}
