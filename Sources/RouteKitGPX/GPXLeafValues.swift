internal import RouteKit
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Values, part of the GPX semantics layer: the text of a value element (gathered in ``GPXStreamParser/text`` by the
// tokenizer, references decoded) read as a number, an integer, a time or a string, and stored in the open point,
// path, metadata, person, copyright or link, as its ``GPXLeafField`` and parent say. A value that is not what its
// element holds is an error at its end tag; a blank one is no value.

extension GPXStreamParser {
    /// Stores the value just read (in ``text``) where the parent wants it: a point, a path, metadata, a person,
    /// copyright or a link.
    mutating func setLeaf(_ field: GPXLeafField, parent: GPXElementKind) throws(RouteKitError) {
        switch parent {
        case .trkpt, .rtept, .wpt, .tpx, .extensions:
            try setPointField(field)
        case .trk, .rte:
            switch field {
            case .name: path.name = textString()
            case .cmt: path.comment = textString()
            case .desc: path.description = textString()
            case .src: path.source = textString()
            case .type: path.type = textString()
            case .number:
                guard textIsBlank() || parseInteger(text.base, text.count) != nil else {
                    throw error(.invalidValue, "<number> is not an integer")
                }
                path.number = parseInteger(text.base, text.count)
            case .url: path.links.append(GPXLink(href: textString()))
            case .urlname:
                if path.links.isEmpty { path.links.append(GPXLink(href: "")) }
                path.links[path.links.count - 1].text = textString()
            default: break
            }
        case .root, .metadata:
            switch field {
            case .name: meta.name = textString()
            case .desc: meta.description = textString()
            case .time:
                meta.time = try timestamp()
            case .keywords: meta.keywords = textString()
            case .url: meta.links.append(GPXLink(href: textString()))
            case .urlname:
                if meta.links.isEmpty { meta.links.append(GPXLink(href: "")) }
                meta.links[meta.links.count - 1].text = textString()
            default: break
            }
        case .person:
            if field == .name { person.name = textString() }
        case .copyright:
            let value = textString()
            if field == .year { meta.copyright?.year = value }
            if field == .license { meta.copyright?.license = value }
        case .link:
            if field == .linkText { link.text = textString() }
            if field == .linkType { link.type = textString() }
        default:
            break
        }
    }

    /// Stores a value of the open point: a `Location` field, a sensor value, or one of the extras.
    mutating func setPointField(_ field: GPXLeafField) throws(RouteKitError) {
        switch field {
        case .ele: location.altitude = try number(field)
        case .time: location.timestamp = try timestamp()
        case .hr: values.storage.0 = try number(field) ?? .nan
        case .cad: values.storage.1 = try number(field) ?? .nan
        case .atemp: values.storage.2 = try number(field) ?? .nan
        case .wtemp: values.storage.3 = try number(field) ?? .nan
        case .depth: values.storage.4 = try number(field) ?? .nan
        case .power: values.storage.5 = try number(field) ?? .nan
        case .speed: location.speed = try nonNegative(field)
        case .course: location.course = try nonNegative(field)
        case .hAcc: location.horizontalAccuracy = try nonNegative(field)
        case .vAcc: location.verticalAccuracy = try nonNegative(field)
        case .speedAcc: location.speedAccuracy = try nonNegative(field)
        case .courseAcc: location.courseAccuracy = try nonNegative(field)
        default:
            hasExtras = true
            switch field {
            case .name: extras.name = textString()
            case .cmt: extras.comment = textString()
            case .desc: extras.description = textString()
            case .src: extras.source = textString()
            case .sym: extras.symbol = textString()
            case .type: extras.type = textString()
            case .fix: extras.fix = textString()
            case .sat: extras.satellites = try integer(field)
            case .dgpsid: extras.dgpsID = try integer(field)
            case .hdop: extras.hdop = try number(field)
            case .vdop: extras.vdop = try number(field)
            case .pdop: extras.pdop = try number(field)
            case .magvar: extras.magneticVariation = try number(field)
            case .geoidheight: extras.geoidHeight = try number(field)
            case .ageofdgpsdata: extras.ageOfDGPSData = try number(field)
            case .url: extras.links.append(GPXLink(href: textString()))
            case .urlname:
                if extras.links.isEmpty { extras.links.append(GPXLink(href: "")) }
                extras.links[extras.links.count - 1].text = textString()
            default: break
            }
        }
    }

    /// The value read, as a string.
    mutating func textString() -> String {
        String(decoding: UnsafeBufferPointer(start: text.base, count: text.count), as: UTF8.self)
    }

    /// Whether the value read is empty or whitespace (no value).
    mutating func textIsBlank() -> Bool {
        for i in 0..<text.count where !isXMLSpace(text.base[i]) { return false }
        return true
    }

    /// The value read as a number; nil when blank; an error naming the element otherwise.
    mutating func number(_ field: GPXLeafField) throws(RouteKitError) -> Double? {
        if let v = parseDecimal(text.base, text.count) { return v }
        if textIsBlank() { return nil }  // <ele></ele> or <ele> </ele>: no value
        throw error(.invalidValue, "<\(field)> is not a number")
    }

    /// Speed, course and accuracies: Core Location writes -1 for "unknown"; RouteKit keeps no value in disguise,
    /// so a negative value is read as missing, with a warning.
    mutating func nonNegative(_ field: GPXLeafField) throws(RouteKitError) -> Double? {
        guard let v = try number(field) else { return nil }
        if v < 0 {
            warn(
                "negativeValue",
                "negative speed, course or accuracy values (Core Location's -1 for unknown) were read as missing")
            return nil
        }
        return v
    }

    /// The value read as an integer; nil when blank; an error naming the element otherwise.
    mutating func integer(_ field: GPXLeafField) throws(RouteKitError) -> Int? {
        if textIsBlank() { return nil }
        guard let v = parseInteger(text.base, text.count) else {
            throw error(.invalidValue, "<\(field)> is not an integer")
        }
        return v
    }

    /// The value read as an ISO 8601 time; nil when blank; an error otherwise.
    mutating func timestamp() throws(RouteKitError) -> Timestamp? {
        if let t = parseTimestamp(text.base, text.count, cache: &dayCache) { return t }
        if textIsBlank() { return nil }
        throw error(.invalidValue, "<time> is not an ISO 8601 time", detail: "<time>\(textString().prefix(60))</time>")
    }
}
