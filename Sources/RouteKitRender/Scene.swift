public import RouteKit

/// A colour with straight (not premultiplied) alpha.
package struct RGBA: Sendable, Hashable {
    /// Red, green, blue, 0–255.
    package var red: UInt8
    package var green: UInt8
    package var blue: UInt8
    /// Opacity, 0 (transparent) to 1 (opaque).
    package var alpha: Double

    /// A colour from its components.
    package init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = min(1, max(0, alpha))
    }

    /// The same colour with another opacity.
    package func opacity(_ alpha: Double) -> RGBA { RGBA(red, green, blue, alpha: alpha) }

    /// `#rrggbb`.
    package var hex: String {
        let digits = Array("0123456789abcdef")
        var s = "#"
        for c in [red, green, blue] {
            s.append(digits[Int(c >> 4)])
            s.append(digits[Int(c & 15)])
        }
        return s
    }
}

/// A point in picture coordinates: pixels from the top-left corner, y downwards.
package struct Point: Sendable, Hashable {
    package var x: Double
    package var y: Double
    package init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }
}

/// How a shape is painted.
package struct Style: Sendable, Hashable {
    /// The fill, or `nil` for none.
    package var fill: RGBA?
    /// The outline, or `nil` for none.
    package var stroke: RGBA?
    /// The outline's width in pixels.
    package var lineWidth: Double
    /// Dash lengths in pixels, or empty for a solid line.
    package var dash: [Double]

    /// A style; by default nothing is painted.
    package init(fill: RGBA? = nil, stroke: RGBA? = nil, lineWidth: Double = 1, dash: [Double] = []) {
        self.fill = fill
        self.stroke = stroke
        self.lineWidth = lineWidth
        self.dash = dash
    }
}

/// An axis-aligned rectangle in picture coordinates.
package struct Rect: Sendable, Hashable {
    package var x: Double
    package var y: Double
    package var width: Double
    package var height: Double
    package init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Where a text's anchor point lies on its baseline.
package enum TextAnchor: String, Sendable, Hashable {
    case start, middle, end
}

/// One thing drawn. The same list draws the SVG and the PNG, so both show the same picture.
package enum SceneElement: Sendable, Hashable {
    /// A polyline (or a polygon, when closed).
    case path([Point], closed: Bool, style: Style)
    /// A circle.
    case circle(center: Point, radius: Double, style: Style)
    /// An axis-aligned rectangle.
    case rect(x: Double, y: Double, width: Double, height: Double, style: Style)
    /// One line of text.
    case text(String, at: Point, size: Double, anchor: TextAnchor, color: RGBA, bold: Bool)
    /// A PNG image (a basemap's tile) drawn into `frame`, only within `clip` (the map's frame).
    case image(png: [UInt8], frame: Rect, clip: Rect)
}

/// A picture as a list of elements, drawn in order over a background: what ``SVGWriter`` writes and
/// ``PNGRasteriser`` rasterises.
public struct Scene: Sendable, Hashable {
    /// Size in pixels.
    public var width: Int
    public var height: Int
    /// The background colour.
    package var background: RGBA
    /// The elements, back to front.
    package var elements: [SceneElement] = []

    /// An empty picture.
    package init(width: Int, height: Int, background: RGBA = RGBA(255, 255, 255)) {
        self.width = width
        self.height = height
        self.background = background
    }

    /// Appends an element.
    package mutating func add(_ element: SceneElement) { elements.append(element) }

    /// The number of vertices of every path (a test's and a caller's measure of how much was drawn).
    package var pathVertexCount: Int {
        elements.reduce(0) { n, e in
            if case .path(let points, _, _) = e { return n + points.count }
            return n
        }
    }
}

/// A picture size, `WIDTHxHEIGHT` on the command line.
public struct PictureSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    /// The largest side accepted: 8,192 pixels (a 256 MiB image at most).
    package static let maximumSide = 8_192
    /// The smallest side accepted: 64 pixels.
    package static let minimumSide = 64

    /// A size within the accepted range.
    public init(width: Int, height: Int) throws(RouteKitError) {
        for (name, v) in [("width", width), ("height", height)]
        where v < Self.minimumSide || v > Self.maximumSide {
            throw RouteKitError(
                .invalidArgument,
                "picture \(name) \(v) is outside \(Self.minimumSide)…\(Self.maximumSide) pixels")
        }
        self.width = width
        self.height = height
    }

    /// Parses `1200x800`.
    public init(parsing text: String) throws(RouteKitError) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else {
            throw RouteKitError(.invalidArgument, "a size is WIDTHxHEIGHT in pixels (1200x800), not '\(text)'")
        }
        try self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
}
