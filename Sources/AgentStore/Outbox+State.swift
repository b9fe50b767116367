import FoundationEssentials
import Logging

extension Outbox {
    /// One segment file: its open descriptor, its first index, and where each of its records starts.
    struct Segment {
        let path: String
        let fd: Int32
        let base: UInt64
        var offsets: [UInt32]
        var size: Int64

        /// The index after this segment's last record.
        var end: UInt64 { base + UInt64(offsets.count) }
    }

    /// What a segment scan found: a usable outbox, or damage that sends the directory aside.
    private enum Recovery {
        case recovered(State)
        case damaged(String)
    }

    /// The outbox's files and positions; only used under the outbox's lock.
    struct State {
        let directory: String
        var segments: [Segment]
        var head: UInt64
        var dropped: UInt64
        var persistedHead: UInt64
        var persistedDropped: UInt64
        var unsynced = 0
        /// Whether anything is flushed (not with `.never`).
        var flushes = true
        var lastSync = ContinuousClock.now
        var dropping = false
        var closed = false
        /// The cursor file, kept open and written over in place when nothing is flushed; -1 until
        /// the first write.
        var cursorFD: Int32 = -1

        var cursorPath: String { directory + "/cursor" }
        var tail: UInt64 { segments[segments.count - 1].end }
        var count: Int { Int(tail - head) }

        // MARK: Opening

        static func recover(directory: String, configuration: OutboxConfiguration, logger: Logger)
            throws(AgentStoreError) -> State
        {
            try FileIO.makeDirectory(directory)
            switch try load(directory: directory, configuration: configuration, logger: logger) {
            case .recovered(let state):
                return state
            case .damaged(let reason):
                let aside = try FileIO.moveAside(directory)
                logger.info(
                    "The outbox was damaged and was moved aside; starting an empty outbox",
                    metadata: ["event": "outbox.damaged", "outbox.reason": "\(reason)", "file.moved_to": "\(aside)"])
                try FileIO.makeDirectory(directory)
                guard
                    case .recovered(let state) = try load(
                        directory: directory, configuration: configuration, logger: logger)
                else { throw AgentStoreError(.io, "the fresh outbox in \(directory) could not be opened") }
                return state
            }
        }

        private static func load(directory: String, configuration: OutboxConfiguration, logger: Logger)
            throws(AgentStoreError) -> Recovery
        {
            let names = try FileIO.contents(of: directory)
            try FileIO.removeFile(directory + "/cursor.tmp")
            let bases = names.compactMap(OutboxFormat.segmentBase(name:)).sorted()
            var segments: [Segment] = []
            var finished = false
            defer {
                if !finished { for segment in segments { FileIO.closeFile(segment.fd) } }
            }
            for (position, base) in bases.enumerated() {
                let path = directory + "/" + OutboxFormat.segmentName(base: base)
                let fd = try FileIO.openFile(path, create: false)
                segments.append(Segment(path: path, fd: fd, base: base, offsets: [], size: 0))
                let bytes = try FileIO.readAll(fd, path: path)
                let isLast = position == bases.count - 1
                if isLast && bytes.count < OutboxFormat.segmentHeaderSize {
                    // Created just before a crash: it can hold no record, so it is simply rewritten.
                    try FileIO.truncate(fd, to: 0, path: path)
                    try FileIO.write(fd, OutboxFormat.segmentHeader(base: base), at: 0, path: path)
                    try FileIO.sync(fd, path: path)
                    segments[position].size = Int64(OutboxFormat.segmentHeaderSize)
                    continue
                }
                guard OutboxFormat.parseSegmentHeader(bytes) == base else {
                    return .damaged("\(path) has no valid segment header")
                }
                if position > 0 && segments[position - 1].end != base {
                    return .damaged("records are missing before \(path)")
                }
                var offset = OutboxFormat.segmentHeaderSize
                var offsets: [UInt32] = []
                while offset < bytes.count,
                    let length = OutboxFormat.recordLength(
                        in: bytes, at: offset, maximumRecordSize: configuration.maximumRecordSize)
                {
                    offsets.append(UInt32(offset))
                    offset += length
                }
                if offset < bytes.count {
                    guard isLast else { return .damaged("\(path) is damaged at byte \(offset)") }
                    // The record being written when the process or the power stopped.
                    logger.info(
                        "Discarded an incomplete record at the end of the outbox",
                        metadata: [
                            "event": "outbox.record.incomplete", "file.path": "\(path)",
                            "outbox.bytes": "\(bytes.count - offset)",
                        ])
                    try FileIO.truncate(fd, to: Int64(offset), path: path)
                    try FileIO.sync(fd, path: path)
                }
                segments[position].offsets = offsets
                segments[position].size = Int64(offset)
            }

            var state = State(
                directory: directory, segments: segments, head: 0, dropped: 0, persistedHead: 0, persistedDropped: 0)
            state.flushes = configuration.syncPolicy != .never
            let cursor = try state.readCursor(logger: logger)
            if segments.isEmpty {
                let base = cursor?.head ?? configuration.firstIndex
                state.segments = [try createSegment(directory: directory, base: base, flushing: state.flushes)]
            }
            (state.persistedHead, state.persistedDropped) = cursor ?? (state.segments[0].base, 0)
            state.head = min(max(state.persistedHead, state.segments[0].base), state.tail)
            state.dropped = state.persistedDropped
            if state.persistedHead < state.segments[0].base {
                // Compaction writes the cursor past a segment before deleting it: undelivered
                // records are missing, a segment deleted by someone else. Counted, and said.
                let missing = state.segments[0].base - state.persistedHead
                state.dropped += missing
                logger.info(
                    "Records are missing from the outbox (a segment file was deleted): counted as dropped",
                    metadata: [
                        "event": "outbox.records.missing", "outbox.directory": "\(directory)",
                        "outbox.missing": "\(missing)",
                    ])
            }
            if state.count > configuration.capacity {
                let excess = UInt64(state.count - configuration.capacity)
                state.head += excess
                state.dropped += excess
            }
            finished = true
            try state.writeCursorIfChanged()
            try state.compact()
            return .recovered(state)
        }

        /// The cursor's head and dropped count; nil when there is none, or when it is damaged, in
        /// which case it is moved aside and every record left is delivered again.
        private func readCursor(logger: Logger) throws(AgentStoreError) -> (head: UInt64, dropped: UInt64)? {
            guard FileIO.exists(cursorPath) else { return nil }
            let fd = try FileIO.openFile(cursorPath, create: false)
            defer { FileIO.closeFile(fd) }
            let bytes = try FileIO.readAll(fd, path: cursorPath)
            if let cursor = OutboxFormat.decodeCursor(bytes) { return cursor }
            let aside = try FileIO.moveAside(cursorPath)
            logger.info(
                "The outbox cursor was damaged and was moved aside; undelivered records may be sent again",
                metadata: ["event": "outbox.cursor.damaged", "file.path": "\(cursorPath)", "file.moved_to": "\(aside)"])
            return nil
        }

        private static func createSegment(directory: String, base: UInt64, flushing: Bool) throws(AgentStoreError)
            -> Segment
        {
            let path = directory + "/" + OutboxFormat.segmentName(base: base)
            let fd = try FileIO.openFile(path, create: true)
            do {
                try FileIO.truncate(fd, to: 0, path: path)
                try FileIO.write(fd, OutboxFormat.segmentHeader(base: base), at: 0, path: path)
                if flushing {
                    try FileIO.sync(fd, path: path)
                    try FileIO.syncDirectory(directory)
                }
            } catch {
                FileIO.closeFile(fd)
                try? FileIO.removeFile(path)
                throw error
            }
            return Segment(path: path, fd: fd, base: base, offsets: [], size: Int64(OutboxFormat.segmentHeaderSize))
        }

        // MARK: Operations

        private func checkOpen() throws(AgentStoreError) {
            if closed {
                throw AgentStoreError(.closed, "the outbox in \(directory) was used after it was closed")
            }
        }

        /// Appends one record; with `deferringSync` the sync policy is left to ``syncByPolicy(configuration:)``,
        /// called once after a batch.
        mutating func append(
            topic: String, payload: [UInt8], configuration: OutboxConfiguration, deferringSync: Bool = false,
            logger: Logger
        ) throws(AgentStoreError) {
            try checkOpen()
            guard topic.utf8.count <= Int(UInt16.max) else {
                throw AgentStoreError(
                    .recordTooLarge, "an outbox topic of \(topic.utf8.count) bytes is over the limit of 65535 bytes")
            }
            let record = OutboxFormat.encodeRecord(topic: topic, payload: payload)
            guard record.count <= configuration.maximumRecordSize else {
                throw AgentStoreError(
                    .recordTooLarge,
                    "an outbox record of \(record.count) bytes is over maximumRecordSize "
                        + "(\(configuration.maximumRecordSize) bytes) for \(directory)")
            }
            let current = segments[segments.count - 1]
            if current.offsets.count >= configuration.segmentRecordLimit
                || (current.offsets.count >= configuration.deliveredSegmentRecordLimit && current.end <= head)
                || (!current.offsets.isEmpty
                    && current.size + Int64(record.count) > Int64(configuration.segmentByteLimit))
            {
                try rotate()
            }
            let last = segments.count - 1
            let segment = segments[last]
            do {
                try FileIO.write(segment.fd, record, at: segment.size, path: segment.path)
            } catch {
                try? FileIO.truncate(segment.fd, to: segment.size, path: segment.path)
                throw error
            }
            segments[last].offsets.append(UInt32(segment.size))
            segments[last].size += Int64(record.count)
            unsynced += 1
            switch deferringSync ? nil : configuration.syncPolicy {
            case nil:
                break
            case .everyAppend:
                do {
                    try sync()
                } catch {
                    segments[last].offsets.removeLast()
                    segments[last].size = segment.size
                    unsynced -= 1
                    try? FileIO.truncate(segment.fd, to: segment.size, path: segment.path)
                    throw error
                }
            case .batched:
                try syncByPolicy(configuration: configuration)
            case .never:
                break
            }
            if count > configuration.capacity {
                let excess = UInt64(count - configuration.capacity)
                head += excess
                dropped += excess
                if !dropping {
                    dropping = true
                    logger.info(
                        "The outbox is full; dropping its oldest records",
                        metadata: [
                            "event": "outbox.full", "outbox.capacity": "\(configuration.capacity)",
                            "outbox.directory": "\(directory)",
                        ])
                }
            } else {
                dropping = false
            }
            try compact()
        }

        /// Flushes what the sync policy says must be on the device now: everything with
        /// `.everyAppend`, a full batch or an old one with `.batched`.
        mutating func syncByPolicy(configuration: OutboxConfiguration) throws(AgentStoreError) {
            switch configuration.syncPolicy {
            case .everyAppend: try sync()
            case .batched(let records, let interval):
                if unsynced >= records || lastSync.duration(to: .now) >= interval { try sync() }
            case .never: break
            }
        }

        /// Starts a new segment after flushing the current one, so only the last segment can ever
        /// hold a torn record.
        private mutating func rotate() throws(AgentStoreError) {
            try sync()
            segments.append(try Self.createSegment(directory: directory, base: tail, flushing: flushes))
        }

        func peek(max: Int) throws(AgentStoreError) -> [OutboxRecord] {
            try records(from: head, max: max)
        }

        func newest(max: Int) throws(AgentStoreError) -> [OutboxRecord] {
            try records(from: tail - UInt64(Swift.min(Swift.max(0, max), count)), max: max)
        }

        /// Up to `max` undelivered records from index `start` (at least ``head``) on, in order.
        func records(from start: UInt64, max: Int) throws(AgentStoreError) -> [OutboxRecord] {
            try checkOpen()
            let limit = Swift.min(Swift.max(0, max), Int(tail - start))
            var result: [OutboxRecord] = []
            result.reserveCapacity(limit)
            var index = start
            for segment in segments where segment.end > index && result.count < limit {
                let first = Int(index - segment.base)
                let last = Swift.min(segment.offsets.count, first + limit - result.count)
                let start = Int64(segment.offsets[first])
                let end = last < segment.offsets.count ? Int64(segment.offsets[last]) : segment.size
                let bytes = try FileIO.read(segment.fd, count: Int(end - start), at: start, path: segment.path)
                guard bytes.count == end - start else {
                    throw AgentStoreError(
                        .io, "\(segment.path) is shorter than this process wrote it; was it changed by another program?"
                    )
                }
                for position in first..<last {
                    let offset = Int64(segment.offsets[position])
                    let next = position + 1 < last ? Int64(segment.offsets[position + 1]) : end
                    result.append(
                        OutboxFormat.decodeRecord(
                            bytes, at: Int(offset - start), length: Int(next - offset),
                            index: segment.base + UInt64(position)))
                }
                index = segment.base + UInt64(last)
            }
            return result
        }

        mutating func advanceHead(to newHead: UInt64, logger: Logger) throws(AgentStoreError) {
            try checkOpen()
            guard newHead > head else { return }
            let previous = head
            head = newHead
            do {
                try writeCursorIfChanged()
            } catch {
                head = previous
                throw error
            }
            if count < 1 { dropping = false }
            try compact()
        }

        mutating func sync() throws(AgentStoreError) {
            try checkOpen()
            if unsynced > 0, flushes {
                let segment = segments[segments.count - 1]
                try FileIO.sync(segment.fd, path: segment.path)
                unsynced = 0
            }
            lastSync = .now
        }

        /// Deletes the segments (never the last) whose records are all delivered or dropped, after
        /// the cursor that says so is on the device.
        private mutating func compact() throws(AgentStoreError) {
            guard segments.count > 1, segments[0].end <= head else { return }
            try writeCursorIfChanged()
            while segments.count > 1, segments[0].end <= head {
                try FileIO.removeFile(segments[0].path)
                FileIO.closeFile(segments[0].fd)
                segments.removeFirst()
            }
            if flushes { try FileIO.syncDirectory(directory) }
        }

        /// Writes the cursor now, if it changed.
        mutating func writeCursor() throws(AgentStoreError) {
            try checkOpen()
            try writeCursorIfChanged()
        }

        private mutating func writeCursorIfChanged() throws(AgentStoreError) {
            guard head != persistedHead || dropped != persistedDropped else { return }
            let bytes = OutboxFormat.encodeCursor(head: head, dropped: dropped)
            if flushes {
                try FileIO.writeAtomically(bytes, to: cursorPath)
            } else {
                // An outbox in memory (the agent's spool) outlives the process, not the power: one
                // write of the cursor's 28 bytes over the old ones is done whole or not at all
                // when the process dies (and a torn cursor fails its CRC: moved aside, the records
                // delivered again). One call a delivery instead of five: open, truncate, write,
                // close, rename (issue 24).
                if cursorFD < 0 { cursorFD = try FileIO.openFile(cursorPath, create: true) }
                try FileIO.write(cursorFD, bytes, at: 0, path: cursorPath)
            }
            (persistedHead, persistedDropped) = (head, dropped)
        }

        /// Closes the files, first saving the cursor if records were dropped since it was last
        /// written (a reopen with the same capacity would count them again anyway).
        mutating func close() {
            guard !closed else { return }
            try? writeCursorIfChanged()
            closed = true
            for segment in segments { FileIO.closeFile(segment.fd) }
            if cursorFD >= 0 { FileIO.closeFile(cursorFD) }
        }
    }
}
