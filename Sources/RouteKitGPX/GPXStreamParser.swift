internal import RouteKit
import RouteKitIngest

// The GPX reader's parser, in layers. Each file holds one job and says what it hands to the next:
//
// 1. Input (XMLInput.swift; XMLEncoding.swift, XMLEntities.swift): the buffered bytes as UTF-8, the parse position,
//    line and column for errors; byte order marks, the XML declaration's encoding, character and entity references.
// 2. Tokens (XMLTokenizer.swift, XMLTags.swift): text, comments, CDATA, processing instructions, start and end tags
//    with their attributes; an incomplete token waits for more input.
// 3. Namespaces (XMLNamespaces.swift): declarations in scope, prefixes resolved to a ``KnownNamespace``.
// 4. Elements and classification (GPXElements.swift, GPXClassification.swift): the stack of open elements, each
//    classified as a ``GPXElementKind`` (and ``GPXLeafField`` for a value), with a cache for the usual repetition.
// 5. Semantics (GPXSemantics.swift, GPXLeafValues.swift, GPXCapture.swift): points, paths, metadata and values,
//    skipped points, unknown elements kept as XML; out come ``GPXEvent``s.
//
// The layers share one value, ``GPXStreamParser``, and its extensions: the token loop, element stack and semantics
// read each other's state at every tag, and going through separate objects would cost speed. State that separates
// cleanly is its own type: ``XMLInput``, ``NamespaceScope``, ``FrameStack``, ``AttributeList``, ``ElementCache``.
//
// Speed: methods of the parser that only read it are still `mutating`. A nonmutating method receives the (large)
// parser as a borrowed value, and the release build copied it on each call (memmove was a fifth of the profile):
// with `number`, `attribute`, `coordinate` and a few others nonmutating, reading a 1M-point file took about 30%
// longer.

/// Options for reading GPX.
public struct GPXReadOptions: Sendable {
    /// Points per `GPXEvent.trackPoints(_:)` or `GPXEvent.routePoints(_:)` batch. Default 1024 (1 to 2^20).
    public var batchSize: Int = 1024
    /// Bytes read from the file at a time. Default 1 MiB (1 byte to 64 MiB). Memory stays near this whatever the
    /// file size.
    public var chunkSize: Int = 1 << 20
    /// The largest single XML token (a tag, a text node, a comment) held in memory while more input is read, in
    /// bytes. Default 64 MiB. With the read buffer, this bounds the reader's memory whatever the input.
    package var maxTokenSize: Int = 64 << 20
    /// Whether a point (`<trkpt>`, `<rtept>`, `<wpt>`) whose latitude is outside -90...90 or whose longitude is
    /// outside -180...180 is skipped (with its time, values and extensions), with one warning that counts such
    /// points, instead of failing the file. Default `false`: such a file is refused with an error naming the
    /// line and column. OpenTracks' lat=100/lat=200 pause markers are read as pauses either way.
    ///
    /// A point without a `lat` or `lon` attribute, or with one that is not a number, is always skipped and
    /// counted in a warning (it has no position to keep); its children are still checked as any point's, so a
    /// malformed value inside it (`<ele>oops</ele>`) still refuses the file.
    public var skipInvalidPoints: Bool = false
    /// Creates default options.
    public init() {}
}

/// The push parser: bytes in, `GPXEvent`s out. Not thread-safe; one owner (``GPXReader``). Not copyable: it owns
/// its buffers, which are freed when it ends.
///
/// Feed it chunks of any size (one byte at a time works): it parses every complete token and keeps the
/// incomplete tail for the next chunk. It checks XML well-formedness (tag nesting, attribute syntax,
/// entity references, namespace prefixes bound everywhere, a single root) while it maps GPX elements to
/// `GPXPoint`s; it never builds a tree.
struct GPXStreamParser: ~Copyable {
    let options: GPXReadOptions
    /// Limits that keep hostile input linear: attributes on one element, namespace declarations in scope.
    static let maxAttributes = 10_000
    static let maxBindings = 1_000
    /// Longest element name or namespace declaration: keeps the name and namespace stacks' Int32 offsets safe.
    static let maxNameLength = 65_536
    /// Largest unknown extension element kept for writing back (bytes).
    static let maxCaptureSize = 1 << 20

    // Input (XMLInput.swift) and tokens (XMLTokenizer.swift).
    var input: XMLInput
    var incompleteLength = 0  // length of the incomplete token the last parse stopped at
    var finished = false

    // Tags (XMLTags.swift), namespaces (XMLNamespaces.swift), elements (GPXElements.swift, GPXClassification.swift).
    let nameBytes = NameByteTable()
    var attrs = AttributeList()
    var namespaces = NamespaceScope()
    var stack = FrameStack()
    /// The names of the open elements (``Frame/nameStart``), to match end tags.
    var names: RawBytes
    let elementCache = ElementCache()
    var rootSeen = false
    var rootHasNamespace = true

    // Output.
    var events: [GPXEvent] = []
    var batch: [GPXPoint] = []
    var warned: Set<String> = []

    // Current objects (GPXSemantics.swift, GPXLeafValues.swift).
    /// The text of the open value element, references decoded.
    var text: RawBytes
    var dayCache = Timestamp.DayCache()
    var location = Location(latitude: 0, longitude: 0)
    var values = GPXPointValues()
    var extras = GPXPointExtras()
    var hasExtras = false
    var marker: UInt8 = 0
    /// Whether the open point is skipped (no usable coordinates): its children are read and checked, then it is
    /// dropped with its time and values.
    var skipPoint = false
    /// Points skipped since the last report (``reportSkippedPoints(only:)``), by ``SkipReason`` × element
    /// (trkpt, rtept, wpt): how many, and the line of the first.
    var skippedCounts = [Int](repeating: 0, count: 6)
    var skippedLines = [Int](repeating: 0, count: 6)
    var path = GPXPathInfo()
    var pathStarted = false
    var meta = GPXMetadata()
    var metaEmitted = false
    var emittedMeta = GPXMetadata()
    var person = GPXPerson()
    var link = GPXLink(href: "")
    var segmentExtensions: [String] = []
    var rootExtensions: [String] = []

    // Capture of unknown elements as standalone XML (GPXCapture.swift).
    var capture: RawBytes
    var captureDepth = 0  // stack depth of the captured root (0: not capturing)
    /// The line where a run of whitespace began that reached the end of the buffer and was dropped: a text token
    /// right after it is reported from there, as it would be had the run and the text come in one read.
    var droppedSpaceLine: Int?
    var captureInsert = 0
    var captureUsed: Set<[UInt8]> = []
    var captureUsesDefault = false
    var captureBindingMark = 0  // bindings in scope outside the captured fragment
    var captureTooLarge = false

    init(options: GPXReadOptions, fileName: String?) {
        self.options = options
        self.input = XMLInput(capacity: options.chunkSize + 4096, fileName: fileName)
        self.names = RawBytes(capacity: 1024)
        self.text = RawBytes(capacity: 256)
        self.capture = RawBytes(capacity: 256)
        batch.reserveCapacity(options.batchSize)
    }

    /// An error at `offset` (default: the start of the current token), with its line and column.
    func error(_ code: RouteKitError.Code, _ message: String, at offset: Int? = nil, detail: String? = nil)
        -> RouteKitError
    {
        input.error(code, message, at: offset, detail: detail)
    }

    /// A warning, once per kind per document, at the line of the current token.
    mutating func warn(_ kind: String, _ message: String, line: Int? = nil) {
        guard !warned.contains(kind) else { return }
        warned.insert(kind)
        events.append(.warning(GPXWarning(kind: kind, message: message, line: line ?? input.tokenLine)))
    }
}
