/// An optional property that a synthesized `Encodable` writes as `null` when it is `nil`, instead of leaving its key
/// out (what synthesized encoding does with optionals): for JSON shapes whose every key is always present, such as
/// `routekit … --json` and the HTTP service's bodies. Decoding reads a missing key or `null` as `nil`.
///
/// ```swift
/// struct Summary: Codable {
///     var name: String
///     @ExplicitNull var distance: Double?   // {"name":"x","distance":null}
/// }
/// ```
@propertyWrapper
package struct ExplicitNull<Value> {
    /// The value, `nil` written as `null`.
    package var wrappedValue: Value?

    /// Wraps a value.
    package init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }
}

extension ExplicitNull: Sendable where Value: Sendable {}
extension ExplicitNull: Equatable where Value: Equatable {}
extension ExplicitNull: Hashable where Value: Hashable {}

extension ExplicitNull: Encodable where Value: Encodable {
    /// Writes the value, or `null`.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension ExplicitNull: Decodable where Value: Decodable {
    /// Reads the value, or `nil` for `null`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// Reads a missing key as `nil` (synthesized decoding asks for every key of a non-optional wrapper).
    package func decode<Value: Decodable>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws
        -> ExplicitNull<Value>
    {
        try decodeIfPresent(type, forKey: key) ?? ExplicitNull(wrappedValue: nil)
    }
}
