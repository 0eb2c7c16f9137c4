// Package redistest starts Redis servers and clusters on loopback for
// tests, in temporary directories, and stops them when the test ends
// (and, through the parent-death signal, if the test process dies).
package redistest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary is the server's path, "" when redis-server is not installed.
func Binary() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// Available says whether the servers are installed (a test then adds
// Redis to what it runs on); absent where GOTENSOR_REDIS_REQUIRED=1, t fails.
func Available(t testing.TB) bool {
	t.Helper()
	_, err := exec.LookPath("redis-cli")
	if Binary() != "" && err == nil {
		return true
	}
	if os.Getenv("GOTENSOR_REDIS_REQUIRED") == "1" {
		t.Fatal("redis-server or redis-cli is not installed, and GOTENSOR_REDIS_REQUIRED=1 (apt-get install redis-server)")
	}
	return false
}

// Need skips t when redis-server is absent.
func Need(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("redis-cli")
	if Binary() != "" && err == nil {
		return
	}
	if os.Getenv("GOTENSOR_REDIS_REQUIRED") == "1" {
		t.Fatal("redis-server or redis-cli is not installed, and GOTENSOR_REDIS_REQUIRED=1 (apt-get install redis-server)")
	}
	t.Skip("redis-server is not installed (apt-get install redis-server)")
}

// Server is one redis-server.
type Server struct {
	Port int
	Dir  string
	Args []string
	cmd  *exec.Cmd
	t    testing.TB
}

// Addr is 127.0.0.1:Port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// FreePort is a loopback port free now, with port+10000 (a cluster
// bus) free too, below 55535.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(35000)
		if free(p) && free(p+10000) {
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

func free(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Start starts a server with extra arguments (--maxmemory 10mb, ...).
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	Need(t)
	dir := t.TempDir()
	for try := 0; ; try++ {
		s := &Server{Port: FreePort(t), Dir: dir, t: t}
		s.Args = append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.Port), "--save", "", "--appendonly", "no",
			"--dir", dir, "--protected-mode", "no", "--loglevel", "warning", "--logfile", filepath.Join(dir, "redis.log")}, extra...)
		if err := s.start(); err == nil {
			return s
		} else if try == 3 {
			t.Fatalf("redis-server did not start: %v", err)
		}
	}
}

func (s *Server) start() error {
	s.cmd = exec.Command(Binary(), s.Args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	cmd := s.cmd
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out, _ := s.CLI("ping"); strings.TrimSpace(out) == "PONG" || strings.Contains(out, "NOAUTH") {
			return nil
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return fmt.Errorf("not answering on port %d: %s", s.Port, log)
}

// Kill stops the server at once (SIGKILL).
func (s *Server) Kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// Restart starts the server again with its arguments.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// CLI runs redis-cli against the server (with the password in the
// REDISCLI_AUTH environment variable when one is set on the server).
func (s *Server) CLI(args ...string) (string, error) {
	cmd := exec.Command("redis-cli", append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port)}, args...)...)
	for i, a := range s.Args {
		if a == "--requirepass" && i+1 < len(s.Args) {
			cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+s.Args[i+1])
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Info is a field of INFO.
func (s *Server) Info(field string) string {
	out, _ := s.CLI("info")
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), field+":"); ok {
			return v
		}
	}
	return ""
}

// Cluster is masters and their replicas.
type Cluster struct {
	Nodes []*Server
	t     testing.TB
}

// StartCluster starts masters*(1+replicas) servers and makes a cluster
// of them, each master with replicas replicas, and waits until it is ok
// and every replica is in sync.
func StartCluster(t testing.TB, masters, replicas int, extra ...string) *Cluster {
	t.Helper()
	Need(t)
	c := &Cluster{t: t}
	for range masters * (1 + replicas) {
		c.Nodes = append(c.Nodes, Start(t, append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000"}, extra...)...))
	}
	// each in its own folder: one nodes.conf each
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitOK(30 * time.Second)
	return c
}

// Seeds is every node's address, comma-separated.
func (c *Cluster) Seeds() string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr())
	}
	return strings.Join(a, ",")
}

// WaitOK waits until every live node says cluster_state:ok and every
// live replica's link to its master is up.
func (c *Cluster) WaitOK(within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok := true
		for _, n := range c.Nodes {
			if n.cmd.ProcessState != nil { // killed
				continue
			}
			out, _ := n.CLI("cluster", "info")
			if !strings.Contains(out, "cluster_state:ok") {
				ok = false
				break
			}
			if n.Info("role") == "slave" && n.Info("master_link_status") != "up" {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster not ok within %v", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Masters are the nodes that are masters now.
func (c *Cluster) Masters() []*Server {
	var out []*Server
	for _, n := range c.Nodes {
		if n.cmd.ProcessState == nil && n.Info("role") == "master" {
			out = append(out, n)
		}
	}
	return out
}
