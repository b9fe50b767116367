/// Decodes the fields of a checked NMEA sentence (see ``NMEAFraming``) into an ``NMEASentence``.
///
/// Talkers are not checked beyond their shape: GP, GN, GL, GA, GB, BD, QZ, GI, ... all decode alike.
/// Proprietary sentences (`$P...`) and types other than RMC, GGA, GNS, GLL, GSA, VTG, ZDA and GST are
/// ignored, not rejected.
struct NMEASentenceDecoder {
    /// The outcome of decoding one sentence.
    enum Outcome: Equatable {
        case decoded(NMEASentence)
        /// A well-formed sentence of a type the reader does not use.
        case ignored
        /// A sentence of a used type with a field that cannot be read.
        case invalid
    }

    private var fields: [Range<Int>] = []

    init() {
        fields.reserveCapacity(32)
    }

    /// Decodes the payload (the bytes between `$` and `*`) of a sentence in `line`.
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>, payload: Range<Int>) -> Outcome {
        fields.removeAll(keepingCapacity: true)
        var fieldStart = payload.lowerBound
        for index in payload where line[index] == UInt8(ascii: ",") {
            fields.append(fieldStart..<index)
            fieldStart = index + 1
        }
        fields.append(fieldStart..<payload.upperBound)
        let address = fields[0]
        // Standard addresses are a two-letter talker and a three-letter type; `$P...` is proprietary.
        guard address.count == 5, line[address.lowerBound] != UInt8(ascii: "P") else { return .ignored }
        let a = line[address.lowerBound + 2]
        let b = line[address.lowerBound + 3]
        let c = line[address.lowerBound + 4]
        var reader = FieldReader(line: line, fields: fields)
        let sentence: NMEASentence?
        switch (a, b, c) {
        case (UInt8(ascii: "R"), UInt8(ascii: "M"), UInt8(ascii: "C")): sentence = reader.rmc()
        case (UInt8(ascii: "G"), UInt8(ascii: "G"), UInt8(ascii: "A")):
            sentence = reader.gga(talker: UInt16(line[address.lowerBound]) << 8 | UInt16(line[address.lowerBound + 1]))
        case (UInt8(ascii: "G"), UInt8(ascii: "N"), UInt8(ascii: "S")): sentence = reader.gns()
        case (UInt8(ascii: "G"), UInt8(ascii: "L"), UInt8(ascii: "L")): sentence = reader.gll()
        case (UInt8(ascii: "G"), UInt8(ascii: "S"), UInt8(ascii: "A")): sentence = reader.gsa()
        case (UInt8(ascii: "V"), UInt8(ascii: "T"), UInt8(ascii: "G")): sentence = reader.vtg()
        case (UInt8(ascii: "Z"), UInt8(ascii: "D"), UInt8(ascii: "A")): sentence = reader.zda()
        case (UInt8(ascii: "G"), UInt8(ascii: "S"), UInt8(ascii: "T")): sentence = reader.gst()
        default: return .ignored
        }
        guard let sentence, !reader.failed else { return .invalid }
        return .decoded(sentence)
    }
}

/// Reads typed fields by index; an unreadable non-empty field sets `failed`.
private struct FieldReader {
    let line: UnsafeBufferPointer<UInt8>
    let fields: [Range<Int>]
    var failed = false

    init(line: UnsafeBufferPointer<UInt8>, fields: [Range<Int>]) {
        self.line = line
        self.fields = fields
    }

    private func bytes(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        guard index < fields.count, !fields[index].isEmpty else { return nil }
        return UnsafeBufferPointer(rebasing: line[fields[index]])
    }

    private func byte(_ index: Int) -> UInt8? {
        guard let field = bytes(index), field.count == 1 else { return nil }
        return field[0]
    }

    mutating func double(_ index: Int) -> Double? {
        guard let field = bytes(index) else { return nil }
        guard let value = DecimalParsing.double(field) else {
            failed = true
            return nil
        }
        return value
    }

    mutating func integer(_ index: Int) -> Int? {
        guard let field = bytes(index) else { return nil }
        guard let value = DecimalParsing.integer(field) else {
            failed = true
            return nil
        }
        return value
    }

    func character(_ index: Int) -> Character? {
        byte(index).map { Character(Unicode.Scalar($0)) }
    }

    /// `hhmmss[.sss]` as milliseconds since midnight.
    mutating func timeOfDay(_ index: Int) -> Int? {
        guard let field = bytes(index) else { return nil }
        guard field.count >= 6, let hours = twoDigits(field, 0), let minutes = twoDigits(field, 2),
            let seconds = twoDigits(field, 4), hours < 24, minutes < 60, seconds <= 60
        else {
            failed = true
            return nil
        }
        var millis = 0
        if field.count > 6 {
            guard field[6] == UInt8(ascii: ".") else {
                failed = true
                return nil
            }
            var scale = 100
            for position in 7..<field.count {
                let digit = field[position] &- UInt8(ascii: "0")
                guard digit < 10 else {
                    failed = true
                    return nil
                }
                millis += Int(digit) * scale
                scale /= 10
            }
        }
        return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
    }

    /// `ddmmyy` as days since 1970, two-digit years 80-99 in the 1900s and 00-79 in the 2000s.
    mutating func date(_ index: Int) -> Int? {
        guard let field = bytes(index) else { return nil }
        guard field.count == 6, let day = twoDigits(field, 0), let month = twoDigits(field, 2),
            let shortYear = twoDigits(field, 4)
        else {
            failed = true
            return nil
        }
        let year = shortYear < 80 ? 2000 + shortYear : 1900 + shortYear
        guard CivilTime.isValid(year: year, month: month, day: day) else {
            failed = true
            return nil
        }
        return CivilTime.days(year: year, month: month, day: day)
    }

    /// A `[d]ddmm.mmmm` angle with its hemisphere field, as signed degrees.
    mutating func angle(_ index: Int, negative: UInt8, positive: UInt8, maximumDegrees: Int) -> Double? {
        guard let field = bytes(index) else {
            // A hemisphere without a value is as empty as no value at all.
            return nil
        }
        guard let hemisphere = byte(index + 1), hemisphere == negative || hemisphere == positive else {
            failed = true
            return nil
        }
        var dot = field.count
        for position in 0..<field.count where field[position] == UInt8(ascii: ".") {
            dot = position
            break
        }
        guard dot >= 3,
            let degrees = DecimalParsing.integer(UnsafeBufferPointer(rebasing: field[0..<(dot - 2)])),
            let minutes = DecimalParsing.double(UnsafeBufferPointer(rebasing: field[(dot - 2)...])),
            degrees >= 0, degrees <= maximumDegrees, minutes >= 0, minutes < 60
        else {
            failed = true
            return nil
        }
        let value = Double(degrees) + minutes / 60
        return hemisphere == negative ? -value : value
    }

    private func twoDigits(_ field: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Int? {
        let high = field[offset] &- UInt8(ascii: "0")
        let low = field[offset + 1] &- UInt8(ascii: "0")
        guard high < 10, low < 10 else { return nil }
        return Int(high) * 10 + Int(low)
    }

    mutating func latitude(_ index: Int) -> Double? {
        angle(index, negative: UInt8(ascii: "S"), positive: UInt8(ascii: "N"), maximumDegrees: 90)
    }

    mutating func longitude(_ index: Int) -> Double? {
        angle(index, negative: UInt8(ascii: "W"), positive: UInt8(ascii: "E"), maximumDegrees: 180)
    }

    /// `A` true, `V` false, anything else unknown.
    func status(_ index: Int) -> Bool? {
        switch byte(index) {
        case UInt8(ascii: "A"): true
        case UInt8(ascii: "V"): false
        default: nil
        }
    }

    static let knotsToMetresPerSecond = 1852.0 / 3600.0

    // $--RMC,hhmmss.ss,A,llll.ll,a,yyyyy.yy,a,x.x,x.x,ddmmyy,x.x,a[,m[,s]]*hh
    mutating func rmc() -> NMEASentence? {
        .rmc(
            .init(
                timeOfDay: timeOfDay(1), valid: status(2), latitude: latitude(3), longitude: longitude(5),
                speed: double(7).map { $0 * Self.knotsToMetresPerSecond }, course: double(8), day: date(9),
                modeIndicator: character(12)))
    }

    // $--GGA,hhmmss.ss,llll.ll,a,yyyyy.yy,a,q,nn,h.h,a.a,M,g.g,M,age,ref*hh
    mutating func gga(talker: UInt16) -> NMEASentence? {
        .gga(
            .init(
                talker: talker, timeOfDay: timeOfDay(1), latitude: latitude(2), longitude: longitude(4),
                quality: integer(6),
                satellites: integer(7), hdop: double(8), altitude: double(9), geoidSeparation: double(11),
                differentialAge: double(13)))
    }

    // $--GNS,hhmmss.ss,llll.ll,a,yyyyy.yy,a,modes,nn,h.h,a.a,g.g,age,ref[,s]*hh
    mutating func gns() -> NMEASentence? {
        let modes = bytes(6).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return .gns(
            .init(
                timeOfDay: timeOfDay(1), latitude: latitude(2), longitude: longitude(4), modes: modes,
                satellites: integer(7), hdop: double(8), altitude: double(9), geoidSeparation: double(10)))
    }

    // $--GLL,llll.ll,a,yyyyy.yy,a,hhmmss.ss,A[,m]*hh
    mutating func gll() -> NMEASentence? {
        .gll(
            .init(
                latitude: latitude(1), longitude: longitude(3), timeOfDay: timeOfDay(5), valid: status(6),
                modeIndicator: character(7)))
    }

    // $--GSA,a,x,p1,...,p12,pdop,hdop,vdop[,system]*hh
    mutating func gsa() -> NMEASentence? {
        guard fields.count >= 18 else { return nil }
        var used = 0
        for index in 3..<15 where bytes(index) != nil { used += 1 }
        return .gsa(
            .init(fixType: integer(2), satellitesUsed: used, pdop: double(15), hdop: double(16), vdop: double(17)))
    }

    // $--VTG,x.x,T,x.x,M,x.x,N,x.x,K[,m]*hh (and the pre-2.0 form without the unit letters)
    mutating func vtg() -> NMEASentence? {
        if byte(2) == UInt8(ascii: "T") || fields.count >= 9 {
            return .vtg(
                .init(
                    course: double(1), speed: double(5).map { $0 * Self.knotsToMetresPerSecond },
                    modeIndicator: character(9)))
        }
        return .vtg(.init(course: double(1), speed: double(3).map { $0 * Self.knotsToMetresPerSecond }))
    }

    // $--ZDA,hhmmss.ss,dd,mm,yyyy,zh,zm*hh
    mutating func zda() -> NMEASentence? {
        let time = timeOfDay(1)
        let day = integer(2)
        let month = integer(3)
        let year = integer(4)
        guard let day, let month, let year else { return .zda(.init(timeOfDay: time, day: nil)) }
        // From GPS time's start to the last four-digit year: a longer year would overflow the arithmetic.
        guard (1980...9999).contains(year), CivilTime.isValid(year: year, month: month, day: day) else {
            failed = true
            return nil
        }
        return .zda(.init(timeOfDay: time, day: CivilTime.days(year: year, month: month, day: day)))
    }

    // $--GST,hhmmss.ss,rms,major,minor,orientation,lat-err,lon-err,alt-err*hh
    mutating func gst() -> NMEASentence? {
        .gst(.init(timeOfDay: timeOfDay(1), latitudeError: double(6), longitudeError: double(7)))
    }
}
