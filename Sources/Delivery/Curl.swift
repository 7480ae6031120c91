public import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// A libcurl failure with curl's own message.
public struct CurlError: Error, CustomStringConvertible {
    public let code: Int
    public let message: String
    /// The server's last reply code (HTTP status, SMTP reply), 0 when none came.
    public var reply = 0
    /// Bytes of the request written to the server before the failure (libcurl's request size):
    /// 0 when none left this host, so the server cannot have acted on it; -1 when unknown.
    public var requestBytes = -1
    public var description: String { "curl error \(code): \(message)" }
}

/// One libcurl easy handle, owned and freed here. Used for the HTTP SMS providers, external
/// verifiers and SMTP. Not shared between threads. libcurl itself is loaded by the first handle
/// (`gh_curl_load`), so processes that never send do not map it.
public final class Curl {

    let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var recipientList: UnsafeMutablePointer<curl_slist>?
    /// libcurl writes error text here for the handle's whole life, so it is heap memory we own.
    private let errorBuffer: UnsafeMutablePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        p.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        return p
    }()
    private var upload: (data: [UInt8], offset: Int) = ([], 0)
    private var received: [UInt8] = []

    public init() throws {
        guard gh_curl_load() != 0 else { throw CurlError(code: -1, message: String(cString: gh_curl_load_error())) }
        guard let h = gh_curl_easy_init() else { throw CurlError(code: -1, message: "curl_easy_init failed") }
        handle = h
        try check(gh_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_PROTOCOLS_STR, "http,https,smtp,smtps")
    }

    deinit {
        if let headerList { gh_curl_slist_free_all(headerList) }
        if let recipientList { gh_curl_slist_free_all(recipientList) }
        gh_curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    func check(_ rc: CURLcode) throws {
        guard rc == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            throw CurlError(code: Int(rc.rawValue), message: detail.isEmpty ? String(cString: gh_curl_easy_strerror(rc)) : detail)
        }
    }

    public func set(_ option: CURLoption, _ value: Int) throws { try check(gh_curl_setopt_long(handle, option, value)) }
    public func set(_ option: CURLoption, _ value: String) throws { try check(gh_curl_setopt_str(handle, option, value)) }

    /// A response from `perform`.
    public struct Response {
        public let status: Int
        public let body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The longest a connection may take to open (name lookup, TCP, TLS), in seconds.
    public static let connectTimeout = 5

    /// Bounds the whole transfer to `seconds` (a server that accepts and never answers included)
    /// and opening the connection to `connectTimeout` of them.
    func limit(seconds: Int) throws {
        try set(CURLOPT_TIMEOUT, max(seconds, 1))
        try set(CURLOPT_CONNECTTIMEOUT, min(max(seconds, 1), Curl.connectTimeout))
    }

    /// HTTP/2 over TLS (ALPN), for gateways that speak nothing else (APNs). The handle keeps its
    /// connection between requests, so a sender that reuses the handle reuses the connection.
    public func useHTTP2() throws {
        try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        try set(CURLOPT_PROTOCOLS_STR, "https")
    }

    /// Checks servers against the certificate authorities of this PEM file instead of the system's.
    public func trust(caFile: String) throws { try set(CURLOPT_CAINFO, caFile) }

    /// Sends an HTTP request and returns status and body. `timeout` in seconds.
    public func http(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil, timeout: Int = 10) throws -> Response {
        try set(CURLOPT_URL, url)
        try limit(seconds: timeout)
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_CUSTOMREQUEST, method)
        if let body {
            upload = (body, 0)
            try set(CURLOPT_POST, 1)
            try check(body.withUnsafeBufferPointer { gh_curl_setopt_ptr(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress ?? UnsafePointer(bitPattern: 1)!)) })
            try set(CURLOPT_POSTFIELDSIZE, body.count)
        }
        try setHeaders(headers)
        return try perform()
    }

    /// Sends one message over SMTP (`smtp://` with STARTTLS when `requireTLS`, or `smtps://`).
    public func smtp(url: String, from: String, to: [String], message: [UInt8], username: String?, password: String?,
                     requireTLS: Bool, timeout: Int = 20) throws {
        try set(CURLOPT_URL, url)
        try limit(seconds: timeout)
        try set(CURLOPT_MAIL_FROM, "<\(from)>")
        if let recipientList { gh_curl_slist_free_all(recipientList) }
        recipientList = nil
        for r in to { recipientList = gh_curl_slist_append(recipientList, "<\(r)>") }
        try check(gh_curl_setopt_ptr(handle, CURLOPT_MAIL_RCPT, recipientList.map { UnsafeMutableRawPointer($0) }))
        if let username { try set(CURLOPT_USERNAME, username) }
        if let password { try set(CURLOPT_PASSWORD, password) }
        try set(CURLOPT_USE_SSL, requireTLS ? Int(CURLUSESSL_ALL.rawValue) : Int(CURLUSESSL_NONE.rawValue))
        try set(CURLOPT_UPLOAD, 1)
        upload = (message, 0)
        try set(CURLOPT_INFILESIZE, message.count)
        _ = try perform()
    }

    func setHeaders(_ headers: [String]) throws {
        if let headerList { gh_curl_slist_free_all(headerList) }
        headerList = nil
        for h in headers { headerList = gh_curl_slist_append(headerList, h) }
        try check(gh_curl_setopt_ptr(handle, CURLOPT_HTTPHEADER, headerList.map { UnsafeMutableRawPointer($0) }))
    }

    func perform() throws -> Response {
        received = []
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(gh_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, me))
        try check(gh_curl_setopt_fn(handle, CURLOPT_WRITEFUNCTION) { ptr, size, n, ctx in
            let me = Unmanaged<Curl>.fromOpaque(ctx!).takeUnretainedValue()
            let count = size * n
            guard me.received.count + count <= 1 << 20 else { return 0 }
            if let ptr { me.received.append(contentsOf: UnsafeRawBufferPointer(start: ptr, count: count)) }
            return count
        })
        try check(gh_curl_setopt_ptr(handle, CURLOPT_READDATA, me))
        try check(gh_curl_setopt_fn(handle, CURLOPT_READFUNCTION) { ptr, size, n, ctx in
            let me = Unmanaged<Curl>.fromOpaque(ctx!).takeUnretainedValue()
            let room = size * n
            let left = me.upload.data.count - me.upload.offset
            let count = min(room, left)
            guard count > 0, let ptr else { return 0 }
            me.upload.data.withUnsafeBytes { src in
                UnsafeMutableRawPointer(ptr).copyMemory(from: src.baseAddress!.advanced(by: me.upload.offset), byteCount: count)
            }
            me.upload.offset += count
            return count
        })
        do {
            try check(gh_curl_easy_perform(handle))
        } catch var error as CurlError {
            var reply = 0
            if gh_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &reply) == CURLE_OK { error.reply = reply }
            var written = 0
            if gh_curl_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &written) == CURLE_OK { error.requestBytes = written }
            throw error
        }
        var status = 0
        try check(gh_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status))
        return Response(status: status, body: received)
    }
}
