package realzk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultJarDir is where Debian's zookeeper package puts its jars.
const DefaultJarDir = "/usr/share/java"

// Jars are the jars the standalone server needs, looked up in the jar
// directory. netty-all.jar only points at Debian's split netty jars; the
// server loads netty classes only when configured for netty, which these
// servers are not.
var Jars = []string{
	"zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-simple.jar",
	"netty-all.jar", "commons-cli.jar", "commons-io.jar", "metrics-core.jar",
}

// Environment variables that override the defaults of Options.
const (
	EnvJarDir = "ZABSIM_ZOOKEEPER_JARS"
	EnvJava   = "ZABSIM_JAVA"
)

// Options configure a real server.
type Options struct {
	// JarDir holds Jars; default $ZABSIM_ZOOKEEPER_JARS or DefaultJarDir.
	JarDir string
	// Java is the java binary; default $ZABSIM_JAVA or "java" from PATH.
	Java string
	// TickTimeMs is the server's tick, default 100. Sessions negotiate a
	// timeout within [2, 20] ticks (minSessionTimeout and
	// maxSessionTimeout keep their defaults), and the session tracker
	// expires sessions at tick boundaries, so a short tick makes expire
	// fast.
	TickTimeMs int
	// ExtendedTypes sets zookeeper.extendedTypesEnabled, without which
	// 3.8.0 answers TTL creates with UNIMPLEMENTED. Off by default, as on
	// a stock server.
	ExtendedTypes bool
	// StartTimeout bounds the wait for the server to serve; default 30 s.
	StartTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.JarDir == "" {
		o.JarDir = os.Getenv(EnvJarDir)
	}
	if o.JarDir == "" {
		o.JarDir = DefaultJarDir
	}
	if o.Java == "" {
		o.Java = os.Getenv(EnvJava)
	}
	if o.Java == "" {
		o.Java = "java"
	}
	if o.TickTimeMs == 0 {
		o.TickTimeMs = 100
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	return o
}

// ErrUnavailable is wrapped by Start and Available when java or a jar is
// missing, so that callers can skip instead of fail.
var ErrUnavailable = errors.New("real ZooKeeper server unavailable")

// Available reports whether java and every jar can be found, naming what
// is missing.
func Available(opts Options) error {
	_, _, err := opts.withDefaults().classpath()
	return err
}

// classpath resolves the java binary and the classpath.
func (o Options) classpath() (java, classpath string, err error) {
	java, lookErr := exec.LookPath(o.Java)
	var missing []string
	if lookErr != nil {
		missing = append(missing, fmt.Sprintf("java (%q: %v)", o.Java, lookErr))
	}
	paths := make([]string, 0, len(Jars))
	for _, jar := range Jars {
		path := filepath.Join(o.JarDir, jar)
		if _, err := os.Stat(path); err != nil {
			missing = append(missing, path)
			continue
		}
		paths = append(paths, path)
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("%w: missing %s (install Debian's zookeeper package: apt-get install -y zookeeper; or set %s and %s)",
			ErrUnavailable, strings.Join(missing, ", "), EnvJarDir, EnvJava)
	}
	return java, strings.Join(paths, string(os.PathListSeparator)), nil
}

// Server is a running standalone ZooKeeper 3.8 server on a loopback port,
// with its data and log in a private temporary directory.
type Server struct {
	opts    Options
	dir     string
	addr    string
	logPath string
	cmd     *exec.Cmd
	// exited is closed when the process has been waited for.
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
	// logMu guards finalLog, the log content Stop keeps before removing
	// the directory, so that failure reports after Stop still show it.
	logMu    sync.Mutex
	finalLog string
}

// maxStartAttempts bounds retries when the probed free port is taken
// between probing and the server binding it.
const maxStartAttempts = 3

// Start launches a server and waits until it serves requests.
func Start(opts Options) (*Server, error) {
	opts = opts.withDefaults()
	java, classpath, err := opts.classpath()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < maxStartAttempts; attempt++ {
		server, err := launch(opts, java, classpath)
		if err == nil {
			return server, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

// errPortTaken marks a start that failed because the port was taken.
var errPortTaken = errors.New("port already in use")

func launch(opts Options, java, classpath string) (*Server, error) {
	dir, err := os.MkdirTemp("", "zabsim-realzk-")
	if err != nil {
		return nil, fmt.Errorf("create server directory: %w", err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{
		opts:    opts,
		dir:     dir,
		addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		logPath: filepath.Join(dir, "server.log"),
		exited:  make(chan struct{}),
	}
	if err := s.writeConfig(port); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.startProcess(java, classpath); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitServing(); err != nil {
		s.Stop()
		if strings.Contains(s.lastLog(), "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, err
	}
	return s, nil
}

// freeLoopbackPort asks the kernel for a free port. Another process may
// take it before the server binds it; Start retries then.
func freeLoopbackPort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("probe a free loopback port: %w", err)
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}

// writeConfig writes zoo.cfg. The four-letter words are all enabled: the
// runner reads srvr and dump to know when a session is gone.
func (s *Server) writeConfig(port int) error {
	config := fmt.Sprintf(`tickTime=%d
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
`, s.opts.TickTimeMs, filepath.Join(s.dir, "data"), port)
	if err := os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(config), 0o644); err != nil {
		return fmt.Errorf("write zoo.cfg: %w", err)
	}
	return nil
}

// startProcess starts java in its own process group, so that Stop can kill
// whatever it spawned, with output going to the log file.
func (s *Server) startProcess(java, classpath string) error {
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return fmt.Errorf("create server log: %w", err)
	}
	args := []string{
		// A small serial-GC JVM with the C1 compiler only starts in about
		// 0.3 s, which makes a fresh server per sequence affordable.
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.net.preferIPv4Stack=true",
		// Durability is irrelevant for a throwaway server.
		"-Dzookeeper.forceSync=no",
		// Container and TTL cleanup run on a timer; an hour keeps it out of
		// every run, so results never depend on when it fires.
		"-Dznode.container.checkIntervalMs=3600000",
		"-Dzookeeper.extendedTypesEnabled=" + strconv.FormatBool(s.opts.ExtendedTypes),
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-cp", classpath,
		"org.apache.zookeeper.server.ZooKeeperServerMain",
		filepath.Join(s.dir, "zoo.cfg"),
	}
	s.cmd = exec.Command(java, args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout = logFile
	s.cmd.Stderr = logFile
	s.cmd.SysProcAttr = processAttributes()
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", java, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	return nil
}

// startProbeTimeout bounds one readiness probe.
const startProbeTimeout = 250 * time.Millisecond

// waitServing polls srvr until the server reports a mode: ruok answers
// "imok" before the server accepts sessions, srvr does not.
func (s *Server) waitServing() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StartTimeout)
	defer cancel()
	ticker := time.NewTicker(25 * time.Millisecond)
	defer ticker.Stop()
	for {
		// A probe can be accepted while the server is still starting and
		// then never answered, so each gets a short deadline of its own.
		probeCtx, probeCancel := context.WithTimeout(ctx, startProbeTimeout)
		reply, err := s.Command(probeCtx, "srvr")
		probeCancel()
		if err == nil && strings.Contains(reply, "Mode: ") {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server exited while starting (%v); log tail:\n%s", s.waitErr, s.LogTail(40))
		case <-ctx.Done():
			return fmt.Errorf("server not serving after %v (last probe: %v); log tail:\n%s", s.opts.StartTimeout, err, s.LogTail(40))
		case <-ticker.C:
		}
	}
}

// Addr is the server's client address, host:port.
func (s *Server) Addr() string { return s.addr }

// Stop kills the server's process group, waits for it and removes its
// directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.kill()
		content := s.lastLog()
		s.logMu.Lock()
		s.finalLog = content
		s.logMu.Unlock()
		if err := os.RemoveAll(s.dir); err != nil && s.stopErr == nil {
			s.stopErr = fmt.Errorf("remove server directory: %w", err)
		}
	})
	return s.stopErr
}

// kill sends SIGKILL to the process group: nothing of a throwaway server
// needs a clean shutdown, and SIGKILL cannot be ignored or delayed.
func (s *Server) kill() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := killGroup(s.cmd.Process.Pid); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill server process group %d: %w", s.cmd.Process.Pid, err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("server process %d did not exit 10 s after SIGKILL", s.cmd.Process.Pid)
	}
}

// Command sends a four-letter word (srvr, dump, wchc, ...) and returns the
// reply.
func (s *Server) Command(ctx context.Context, word string) (string, error) {
	dialer := net.Dialer{Timeout: 2 * time.Second}
	conn, err := dialer.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return "", fmt.Errorf("four-letter word %s: %w", word, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return "", fmt.Errorf("four-letter word %s: %w", word, err)
	}
	if _, err := io.WriteString(conn, word); err != nil {
		return "", fmt.Errorf("four-letter word %s: send: %w", word, err)
	}
	reply, err := io.ReadAll(io.LimitReader(conn, 4<<20))
	if err != nil {
		return "", fmt.Errorf("four-letter word %s: read: %w", word, err)
	}
	return string(reply), nil
}

// LastZxid is the zxid of the last transaction the server applied to its
// tree (the "Zxid:" line of srvr). The tree's watches have fired by then.
func (s *Server) LastZxid(ctx context.Context) (int64, error) {
	reply, err := s.Command(ctx, "srvr")
	if err != nil {
		return 0, err
	}
	scanner := bufio.NewScanner(strings.NewReader(reply))
	for scanner.Scan() {
		if hex, ok := strings.CutPrefix(scanner.Text(), "Zxid: 0x"); ok {
			zxid, err := strconv.ParseInt(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("parse srvr zxid %q: %w", hex, err)
			}
			return zxid, nil
		}
	}
	return 0, fmt.Errorf("no Zxid line in srvr reply %q", truncate(reply, 200))
}

// TracksSession reports whether the server's session tracker still holds
// the session (the "Session Sets" part of dump). A session leaves the
// tracker when it expires, slightly before its closeSession transaction is
// applied; see LastZxid.
func (s *Server) TracksSession(ctx context.Context, sessionID int64) (bool, error) {
	reply, err := s.Command(ctx, "dump")
	if err != nil {
		return false, err
	}
	sessions, _, found := strings.Cut(reply, "ephemeral nodes dump:")
	if !found || !strings.Contains(sessions, "Session Sets") {
		return false, fmt.Errorf("unexpected dump reply %q", truncate(reply, 200))
	}
	needle := "0x" + strconv.FormatInt(sessionID, 16)
	for _, line := range strings.Split(sessions, "\n") {
		if strings.TrimSpace(line) == needle {
			return true, nil
		}
	}
	return false, nil
}

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	lines := strings.Split(strings.TrimRight(s.lastLog(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lastLog reads the log file, or the copy Stop kept before removing it.
func (s *Server) lastLog() string {
	s.logMu.Lock()
	final := s.finalLog
	s.logMu.Unlock()
	if final != "" {
		return final
	}
	content, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(server log unreadable: %v)", err)
	}
	return string(content)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
