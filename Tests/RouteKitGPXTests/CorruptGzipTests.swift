import RouteKit
import Testing

@testable import RouteKitGPX

/// A corrupt gzip stream must fail the same way whatever the chunk sizes: errors in stream order, so an XML
/// error in data that decompressed before the corruption wins over the decompression error. (The fuzzer found
/// chunked reads reporting the gzip error first; this input is our own, not the fuzzer's.)
@Suite("Corrupt gzip")
struct CorruptGzipTests {
    /// gzip of a small GPX (our own text) with an XML error (an attribute without a value) about a quarter in.
    static let gzipHex = [
        "1f8b0800000000000203859ac1521c471044effa0a820f6027ab7aba7b1c081d7df5d157d9c65821240889307cbe17697b32",
        "23486f5f9685da9ac3ab9c9d7a1d5c7f78f9727ff1efedb7ef9f1ebebebfc4d572f9e1e6ddf5dde38bfe119717c78f7dfdfe",
        "fef29fa7a7c75f0e87e7e7e7aba787c787bb6f1ffffef472f5e7c397c3afbffd7ec00197c7eea76f9f6f5e5fbedfdefdfced",
        "f1e9e2fee3d3fbcbd28ed7bfb87fbd683fbebbb9bebdbfbd59ae0faf3fae0f3f3ef8a6017b034e0d38df107b439c1ae27c43",
        "ee0d796ac8f30d656f28a78672be61dd1bd653c37abea1ee0df5d450cf37b4bda19d1adaf986be37f453433fdfb0ed0ddba9",
        "619b0c8ea3c6983566c39669efe39ecc1b1c38c6c431193938738ca163327570ec1873c764f0e0e431468fc9ecc1e1634c1f",
        "93f183f3c70800260900238091014c4200a600230698e4209883183988490e823988918398ddf772e3ef77fe2407c11cc4c8",
        "414c7210cc418c1cc42407c11cc4c8414c7210cc418c1cc42407c11cc4c8414c7210cc418c1cc42407c11cc4c8414c7290cc",
        "418e1ce42407c91ce4c8414e7290cc418e1ce4ec1120cf80fd2130c9413207397290931c247390230739c941320739729093",
        "1c247390230739c9413207397290931c2473902307f92607cfa3634cf338a13f3efe75fcc4f39b6bd67d4378dd150e6faad8",
        "ab30d5d8ab61aab957d354cb5e2da6baeed5d554eb5eada6daf66a33d5be57bba96e7b757334080b9696e072bc406070c440",
        "6470cc406870d4406c70dc407070e4407470ec407870f4407c70fc82fcc2f10bf20b9b37099ce317e4178e5f905f387e417e",
        "e1f805f985e317e4178e5f905f387e417ee1f825f9a5e397e4978e5f925fda3b566e59c72fc92f1dbf24bf74fc92fcd2f14b",
        "f24bc72fc92f1dbf24bf74fc0af915c7af905f71fc0af915c7af905fb1df79f2a5e7f815f22b8e5f21bfe2f815f22b8e5f21",
        "bfe2f815f22b8edf4a7eabe3b792dfeaf8ade4b73a7e2bf9ad8edf4a7eab7d6ac863c3f15bc96f75fc56f25b1dbf95fc56c7",
        "6f25bfd5f1abe4571dbf4a7ed5f1abe4571dbf4a7ed5f1abe4571dbf4a7ed53e77e5c1ebf855f2ab8e5f25bfeaf855f2ab8e",
        "5f23bfe6f835f26b8e5f23bfe6f835f26b8e5f23bfe6f835f26b8e5f23bf663717595d1cbf467ecdf16be4d71cbf4e7eddf1",
        "ebe4d71dbf4e7eddf1ebe4d71dbf4e7eddf1ebe4d71dbf4e7eddf1ebe4d7edee27cb9fe3d7c9af3b7e1bf96d8edf467e9be3",
        "b791dfe6f86de4b7397e1bf96d8edf467e9be3b791dfe6f86de4b7397e1bf96d767b96f5d9efcfba40db0d7a91157ab13bf4",
        "224bf462b7e845d6e8c5eed18b2cd28bdda41759a517bb4b2fb24c2f769b5e649d5eec3ebdc842bdd88d7a91957ab14c554a",
        "fec74a544b2c5315136f26aa26de4d544ebc9da89e783f5141f186a28ae21d4525c55b8a6a8af51488a8c09a0a445510def5",
        "54f62c53d115585f81080bacb1409405d65920d2026b2d106d81f51688b8c09a0b445d60dd05222fb0f602d117587f81080c",
        "d21bb42ab4652a12036b31108d81f51888c8c09a0c4465605d062233b03603d119589f81080dacd1409406d6692052036b35",
        "10ad41f1e7127a3061998adac0ba0d446e60ed06a237b07e03111c58c381280eace3402407d672209a03eb3910d181351d88",
        "eac0ba0e4476b0fad31e3deeb14c4578608d07a23cb0ce03911e58eb81680facf740c407d67c20ea03eb3e10f981b51f88fe",
        "c0fa0f4480600d08a240a8fe0c4d0fd12c53d120580f828810ac09415408d6852032046b43101d82f5218810c11a11448960",
        "9d082245b05604d122582f8288119a3f99d4a349cb54e408d68e207a04eb4710418235248822c13a124492602d09a249b09e",
        "041125585382a812ac2b416409d69620ba84eecf7bf5c0d73215658275268834c15a13449b60bd09224eb0e6045127587782",
        "c813ac3d41f409d69f2002056b501085827528884461f3a7e87a8cfe93e9e1f4ff1d3fde1c5fef1e5f6edefd07032cdccf4e",
        "220000",
    ].joined()

    static var gzip: [UInt8] {
        var bytes: [UInt8] = []
        var hex = Array(gzipHex.utf8)
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 87 }
        while hex.count >= 2 {
            bytes.append(nibble(hex[0]) << 4 | nibble(hex[1]))
            hex.removeFirst(2)
        }
        return bytes
    }

    static func outcome(_ bytes: [UInt8], chunk: Int?) -> String {
        do {
            let d = try GPXDocument(bytes: bytes, name: "z.gpx", chunkSize: chunk)
            return "ok \(d.tracks.first?.pointCount ?? -1)"
        } catch {
            return "\(error.code) \(error.line ?? 0):\(error.column ?? 0)"
        }
    }

    @Test("the intact stream decompresses and fails at the XML error")
    func intact() {
        #expect(Self.outcome(Self.gzip, chunk: nil) == "malformedXML 44:25")
    }

    @Test("corrupted anywhere, every chunk size gives the same result", arguments: Array(stride(from: 12, to: 700, by: 9)))
    func corrupted(at offset: Int) {
        var bytes = Self.gzip
        guard offset < bytes.count else { return }
        bytes[offset] ^= 0x5A
        let whole = Self.outcome(bytes, chunk: nil)
        for chunk in [1, 7, 32, 500] {
            #expect(Self.outcome(bytes, chunk: chunk) == whole, "offset \(offset), chunk \(chunk)")
        }
    }
}
