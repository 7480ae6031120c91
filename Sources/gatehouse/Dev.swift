import AuthEngine
import FastCGI
import Delivery
#if canImport(Glibc)
import Glibc
#endif

/// `gatehouse dev`: the responder plus the real nginx in front of it on 127.0.0.1, one command.
struct Dev: Command {
    static let spec = Dev.spec("dev", "Run Gatehouse behind nginx on 127.0.0.1 (dev mode); Ctrl-C stops both.", options: CommonOptions.options + [
        OptionSpec(name: "port", help: "Port nginx listens on (127.0.0.1). Default: 8080."),
        OptionSpec(name: "nginx", help: "nginx binary. Default: the first of /usr/sbin, /usr/local/sbin, /usr/bin."),
        OptionSpec(name: "store", help: "Store URL: sqlite:///path (default: the data folder's file) or postgresql://…"),
    ])
    let common: CommonOptions
    let port: Int
    let nginx: String
    let store: String?

    init(_ p: ParsedArguments) throws {
        common = CommonOptions(p)
        store = p.string("store")
        if let store, StoreLocation.parse(store) == nil { throw UsageError("--store: expected sqlite:///path, postgresql://… or postgres://…") }
        port = try p.int("port") ?? 8080
        nginx = p.string("nginx") ?? Dev.findNginx()
    }

    func run() throws {
        var config = try common.load()
        if let store { config.storeURL = store }
        if common.data == nil, config.source == "embedded dev default" { config.dataDir = ".gatehouse" }
        let dataDir = Files.absolute(config.dataDir)
        config.dataDir = dataDir
        if config.publicOrigin == nil { config.publicOrigin = "http://127.0.0.1:\(port)" }
        guard let root = Runtime.projectRoot() else { throw UsageError("cannot find Gatehouse's public/ and nginx/ folders; set GATEHOUSE_HOME") }

        Signals.blockTermination()
        // The templates and the database are checked here, once, so that a broken setup stops
        // `dev` with its message instead of a restart loop.
        _ = try Runtime(config: config).webApp()
        try DemoOperator.ensure(config)
        let log = config.log
        let socket = dataDir + "/gatehouse.sock"
        var supervisor = ResponderSupervisor(config: config, socket: socket)
        try supervisor.start()
        let confPath = try writeNginxConfig(dataDir: dataDir, root: root, socket: socket, importBodyBytes: config.maxImportBodyBytes)
        let pid = try spawn(nginx, ["-p", dataDir + "/nginx/", "-c", confPath, "-e", dataDir + "/nginx/error.log"])

        func shutdown(_ code: Int32) -> Never {
            kill(pid, SIGQUIT)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            supervisor.stop()
            log.info("dev: nginx and the responder stopped")
            Glibc.exit(code)
        }

        guard waitUntilHealthy(port: port, nginxPID: pid) else {
            log.error("dev: nginx did not come up on 127.0.0.1:\(port); see \(dataDir)/nginx/error.log")
            shutdown(1)
        }
        print("ready http://127.0.0.1:\(port)")
        fflush(nil)
        while true {
            let sig = Signals.wait(anyChild: true)
            guard sig == SIGCHLD else { shutdown(0) }
            var status: Int32 = 0
            while case let child = waitpid(-1, &status, WNOHANG), child > 0 {
                if child == pid { log.error("dev: nginx exited; stopping"); shutdown(1) }
                guard child == supervisor.pid else { continue }
                // The responder died (a trap ends the whole process): bring it back at once,
                // unless it cannot even start.
                guard supervisor.restart(after: status) else { shutdown(1) }
            }
        }
    }

    static func findNginx() -> String {
        for p in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx", "/usr/local/nginx/sbin/nginx"] where access(p, X_OK) == 0 { return p }
        return "nginx"
    }

    func writeNginxConfig(dataDir: String, root: String, socket: String, importBodyBytes: Int) throws -> String {
        let dir = dataDir + "/nginx"
        try Runtime.makeDirectories(dir + "/gatehouse")
        guard let names = Platform.directoryEntries(root + "/nginx") else { throw ConfigError("cannot read \(root)/nginx") }
        for f in names where f.hasSuffix(".conf") {
            let dest = dir + "/gatehouse/" + f
            Files.remove(dest)
            try Files.copy(root + "/nginx/" + f, to: dest)
        }
        // A socket left by a killed nginx would stop the next start.
        Files.remove(dir + "/demo-upstream.sock")
        for t in ["client_body", "fastcgi", "proxy", "uwsgi", "scgi"] { try Runtime.makeDirectories(dir + "/tmp/" + t) }
        // Run as root only when started as root (CI containers); workers then read the data folder.
        let user = geteuid() == 0 ? "user root root;\n" : ""
        let conf = """
        # Written by `gatehouse dev`; regenerated on every start.
        \(user)worker_processes 1;
        daemon off;
        pid \(dir)/nginx.pid;
        error_log \(dir)/error.log warn;
        events { worker_connections 1024; }
        http {
            include gatehouse/gatehouse-mime.conf;
            access_log \(dir)/access.log;
            client_body_temp_path \(dir)/tmp/client_body;
            fastcgi_temp_path \(dir)/tmp/fastcgi;
            proxy_temp_path \(dir)/tmp/proxy;
            uwsgi_temp_path \(dir)/tmp/uwsgi;
            scgi_temp_path \(dir)/tmp/scgi;
            server_tokens off;
            client_max_body_size 1m;

            upstream gatehouse {
                server unix:\(socket);
                keepalive 4;
                keepalive_timeout 5s;
            }

            server {
                listen 127.0.0.1:\(port);
                server_name localhost 127.0.0.1;
                fastcgi_keep_conn on;
                set $gatehouse_public \(root)/public;

                include gatehouse/gatehouse-locations.conf;

                # The demo: a page only signed-in visitors see, protected exactly as any site would be.
                # Open /demo/ → sign in → back here, with the identity the upstream received.
                location /demo/ {
                    include gatehouse/protect.conf;
                    proxy_pass http://unix:\(dir)/demo-upstream.sock:/;
                }
                # Signed in is not enough here: the custom claim role=admin is required (403 otherwise).
                location /demo/admin/ {
                    set $gatehouse_require_claim "role=admin";
                    include gatehouse/protect.conf;
                    proxy_pass http://unix:\(dir)/demo-upstream.sock:/admin/;
                }

                # Step-up: a session must also have passed the phone second factor (the demo project
                # has MFA ENABLED). Without a factor you are asked to enrol one, with one to use it.
                location /demo/mfa/ {
                    include gatehouse/protect-mfa.conf;
                    proxy_pass http://unix:\(dir)/demo-upstream.sock:/mfa/;
                }

                # Phishing-resistant: only a session signed in with a passkey (the demo project has
                # passkeys); any other is sent to the passkey sign-in and back.
                location /demo/passkey/ {
                    include gatehouse/protect-passkey.conf;
                    proxy_pass http://unix:\(dir)/demo-upstream.sock:/passkey/;
                }

                # Dev mode: the emulator helpers and admin APIs are reachable (loopback only). The
                # admin APIs take bodies as long as the admin import's (listen.max_import_body_bytes);
                # Gatehouse holds every other route to listen.max_body_bytes itself.
                location ^~ /identitytoolkit.googleapis.com/v1/projects {
                    client_max_body_size \(max(importBodyBytes, 1 << 20));
                    include gatehouse/gatehouse-fastcgi.conf;
                    fastcgi_pass gatehouse;
                }
                location ^~ /emulator/ {
                    include gatehouse/gatehouse-fastcgi.conf;
                    fastcgi_pass gatehouse;
                }
                location = / {
                    include gatehouse/gatehouse-fastcgi.conf;
                    fastcgi_pass gatehouse;
                }
                location / {
                    return 404;
                }
            }

            # The demo's upstream (reachable only through /demo/): shows the identity headers it got.
            server {
                listen unix:\(dir)/demo-upstream.sock;
                location / {
                    default_type text/plain;
                    add_header Cache-Control "no-store" always;
                    return 200 "Gatehouse demo: you are signed in.\\n\\nThe upstream behind nginx/protect.conf received these headers:\\n\\nX-Auth-User-Id: $http_x_auth_user_id\\nX-Auth-Phone: $http_x_auth_phone\\nX-Auth-Email: $http_x_auth_email\\nX-Auth-Provider: $http_x_auth_provider\\n\\nYour account and sign-out: $http_x_forwarded_proto://$host:\(port)/__/auth/account\\n";
                }
            }
        }

        """
        let path = dir + "/nginx.conf"
        try Files.write(Array(conf.utf8), to: path)
        return path
    }

    func spawn(_ exe: String, _ args: [String]) throws -> pid_t {
        var pid: pid_t = 0
        let argv = ([exe] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var attrs = posix_spawnattr_t()
        posix_spawnattr_init(&attrs)
        defer { posix_spawnattr_destroy(&attrs) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attrs, &none)
        posix_spawnattr_setflags(&attrs, Int16(POSIX_SPAWN_SETSIGMASK))
        let rc = posix_spawnp(&pid, exe, nil, &attrs, argv, environ)
        guard rc == 0 else { throw UsageError("cannot start \(exe): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Polls `GET /__/auth/health` through nginx for up to 10 s, however long each probe takes.
    func waitUntilHealthy(port: Int, nginxPID: pid_t) -> Bool {
        let deadline = Telemetry.monotonicNanoseconds() + 10_000_000_000
        while Telemetry.monotonicNanoseconds() < deadline {
            var status: Int32 = 0
            if waitpid(nginxPID, &status, WNOHANG) == nginxPID { return false }
            if httpStatus(port: port, path: "/__/auth/health") == 200 { return true }
            usleep(100_000)
        }
        return false
    }

    func httpStatus(port: Int, path: String) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Something else may hold the port (nginx then fails to bind it) and never answer: each
        // send and receive gives up after a second, so the probe cannot hold `dev` forever.
        var limit = timeval(tv_sec: 1, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            guard setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0 else { return nil }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { return nil }
        let req = "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
        _ = req.withCString { write(fd, $0, strlen($0)) }
        var buf = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buf, buf.count)
        guard n > 12 else { return nil }
        return Int(String(decoding: buf[9..<12], as: UTF8.self))
    }
}

/// `gatehouse dev`'s responder, in a child process of its own so that a fatal error in one
/// request (which ends the process) is reported and the responder started again at once, as
/// systemd's `Restart=always` does in production. Five deaths within a second of their starts in
/// a row mean it cannot run: `dev` then stops.
struct ResponderSupervisor {
    let config: Config
    let socket: String
    private(set) var pid: pid_t = 0
    private var startedAt: Millis = 0
    private var quickDeaths = 0
    /// A pipe nothing is ever written to: when `dev` ends, however it ends, its write end closes
    /// and the responder, reading the other end, stops too (no responder outlives its `dev`).
    private var lifeline: (read: Int32, write: Int32) = (-1, -1)

    init(config: Config, socket: String) { self.config = config; self.socket = socket }

    mutating func start() throws {
        if lifeline.read < 0 {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw UsageError("cannot start the responder: pipe failed") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            lifeline = (fds[0], fds[1])
        }
        let child = fork()
        guard child >= 0 else { throw UsageError("cannot start the responder: fork failed: \(String(cString: strerror(errno)))") }
        if child == 0 {
            close(lifeline.write)
            ResponderSupervisor.watchParent(lifeline.read)
            ResponderSupervisor.runResponder(config, socket: socket)
        }
        pid = child
        startedAt = SystemClock().now()
    }

    /// Reports how the responder ended and starts a new one; false when it keeps dying at start.
    mutating func restart(after status: Int32) -> Bool {
        let signal = status & 0x7F, code = (status >> 8) & 0xFF
        let how = signal != 0 ? "was killed by signal \(signal)" + (signal == SIGILL || signal == SIGTRAP ? " (a trap)" : "") : "exited with status \(code)"
        config.log.error("dev: the responder (pid \(pid)) \(how); starting it again")
        quickDeaths = SystemClock().now() - startedAt < 1000 ? quickDeaths + 1 : 0
        if quickDeaths >= 5 { config.log.error("dev: the responder keeps dying at start; stopping"); return false }
        do { try start() } catch { config.log.error("dev: \(error)"); return false }
        return true
    }

    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// A thread that waits for the end of `dev` (end of file on the lifeline). A `dev` that stops
    /// normally stops its responder first (SIGTERM, in-flight requests finish); one that was
    /// killed takes the responder with it at once, as a crash of one process would.
    static func watchParent(_ fd: Int32) {
        let box = Unmanaged.passRetained(FileDescriptorBox(fd))
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            guard let raw else { return nil }
            let fd = Unmanaged<FileDescriptorBox>.fromOpaque(raw).takeRetainedValue().fd
            var byte: UInt8 = 0
            while read(fd, &byte, 1) < 0, errno == EINTR {}
            _exit(70)
        }, box.toOpaque())
        if rc != 0 { box.release() } else { pthread_detach(tid) }
    }

    /// The child: the responder and the outbox, until SIGTERM (the signal mask is inherited).
    static func runResponder(_ config: Config, socket: String) -> Never {
        do {
            let runtime = try Runtime(config: config, metrics: true)
            let outbox = try runtime.makeOutbox()
            let app = try runtime.webApp(outbox: outbox)
            outbox.start()
            // nginx's workers must reach the socket; it is bound to this data folder on loopback only.
            let server = try startServer(runtime, app: app, socketOverride: socket, socketMode: 0o666)
            Signals.wait()
            outbox.requestStop()
            server.stop()
            server.wait()
            outbox.stop()
            Glibc.exit(0)
        } catch {
            config.log.error("dev: the responder cannot start: \(error)")
            Glibc.exit(1)
        }
    }
}

private final class FileDescriptorBox {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
}
