import Foundation

/// Writes a ``Scene`` as SVG 1.1: one element per scene element, coordinates with one decimal, text as `<text>`
/// (it scales and stays selectable). The same scene gives the same bytes.
public enum SVGWriter {
    /// The SVG document's bytes (UTF-8).
    public static func svg(_ scene: Scene) -> [UInt8] {
        var out = ""
        out.reserveCapacity(4_096 + scene.pathVertexCount * 12)
        out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"\(scene.width)\" "
        out += "height=\"\(scene.height)\" viewBox=\"0 0 \(scene.width) \(scene.height)\" "
        out += "font-family=\"DejaVu Sans, Verdana, sans-serif\">\n"
        out += "<rect width=\"100%\" height=\"100%\"\(paint("fill", scene.background))/>\n"
        var clips: [Rect: Int] = [:]
        for element in scene.elements {
            switch element {
            case .path(let points, let closed, let style):
                guard let first = points.first else { continue }
                out += "<path d=\"M"
                number(first.x, &out)
                out += " "
                number(first.y, &out)
                for p in points.dropFirst() {
                    out += "L"
                    number(p.x, &out)
                    out += " "
                    number(p.y, &out)
                }
                if closed { out += "Z" }
                out += "\"" + attributes(style) + "/>\n"
            case .circle(let c, let r, let style):
                out += "<circle cx=\"\(text(c.x))\" cy=\"\(text(c.y))\" r=\"\(text(r))\"\(attributes(style))/>\n"
            case .rect(let x, let y, let w, let h, let style):
                out += "<rect x=\"\(text(x))\" y=\"\(text(y))\" width=\"\(text(w))\" height=\"\(text(h))\""
                out += attributes(style) + "/>\n"
            case .text(let string, let at, let size, let anchor, let color, let bold):
                out += "<text x=\"\(text(at.x))\" y=\"\(text(at.y))\" font-size=\"\(text(size))\""
                if anchor != .start { out += " text-anchor=\"\(anchor.rawValue)\"" }
                if bold { out += " font-weight=\"bold\"" }
                out += paint("fill", color) + ">" + escaped(string) + "</text>\n"
            case .image(let png, let frame, let clip):
                // One clip path per clipping rectangle, defined where it is first used.
                let id: Int
                if let known = clips[clip] {
                    id = known
                } else {
                    id = clips.count + 1
                    clips[clip] = id
                    out += "<clipPath id=\"clip\(id)\"><rect x=\"\(text(clip.x))\" y=\"\(text(clip.y))\" "
                    out += "width=\"\(text(clip.width))\" height=\"\(text(clip.height))\"/></clipPath>\n"
                }
                out += "<image x=\"\(text(frame.x))\" y=\"\(text(frame.y))\" width=\"\(text(frame.width))\" "
                out += "height=\"\(text(frame.height))\" clip-path=\"url(#clip\(id))\" preserveAspectRatio=\"none\" "
                out += "href=\"data:image/png;base64,\(Data(png).base64EncodedString())\"/>\n"
            }
        }
        out += "</svg>\n"
        return Array(out.utf8)
    }

    static func attributes(_ style: Style) -> String {
        var s = style.fill.map { paint("fill", $0) } ?? " fill=\"none\""
        if let stroke = style.stroke {
            s += paint("stroke", stroke) + " stroke-width=\"\(text(style.lineWidth))\""
            s += " stroke-linejoin=\"round\" stroke-linecap=\"round\""
            if !style.dash.isEmpty {
                s += " stroke-dasharray=\"\(style.dash.map { text($0) }.joined(separator: " "))\""
            }
        }
        return s
    }

    static func paint(_ name: String, _ color: RGBA) -> String {
        var s = " \(name)=\"\(color.hex)\""
        if color.alpha < 1 { s += " \(name)-opacity=\"\(text(color.alpha, decimals: 2))\"" }
        return s
    }

    /// A number with at most `decimals` decimals and no trailing zeros; never exponent notation.
    static func text(_ v: Double, decimals: Int = 1) -> String {
        var s = ""
        number(v, &s, decimals: decimals)
        return s
    }

    @inline(__always) static func number(_ v: Double, _ out: inout String, decimals: Int = 1) {
        let scale = decimals == 1 ? 10.0 : decimals == 2 ? 100.0 : 1_000.0
        guard v.isFinite else {
            out += "0"
            return
        }
        var scaled = Int64((abs(v) * scale).rounded())
        if scaled == 0 {
            out += "0"
            return
        }
        if v < 0 { out += "-" }
        let whole = scaled / Int64(scale)
        scaled %= Int64(scale)
        out += String(whole)
        if scaled != 0 {
            var frac = String(scaled)
            while frac.count < decimals { frac = "0" + frac }
            while frac.hasSuffix("0") { frac.removeLast() }
            out += "." + frac
        }
    }

    static func escaped(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                // XML 1.0 forbids most control characters; they never carry meaning in a label.
                if ch.value < 0x20 && ch != "\t" { out += " " } else { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }
}
