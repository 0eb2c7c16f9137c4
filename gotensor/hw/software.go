package hw

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// UCX describes the UCX installation, if any.
type UCX struct {
	Available  bool     `json:"available"`
	Library    string   `json:"library,omitempty"`
	Version    string   `json:"version,omitempty"`
	Transports []string `json:"transports,omitempty"`
}

var libDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/usr/local/lib", "/opt/mellanox/ucx/lib", "/opt/ucx/lib"}

func findLib(name string) string {
	dirs := append(filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")), libDirs...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// DetectUCX finds libucp and asks ucx_info (when installed) for the
// version and the transports UCX can use here.
func DetectUCX() UCX {
	u := UCX{Library: findLib("libucp.so.0")}
	u.Available = u.Library != ""
	if !u.Available {
		return u
	}
	if out, err := run("ucx_info", "-v"); err == nil {
		for _, l := range strings.Split(out, "\n") {
			if i := strings.Index(l, "version="); i >= 0 {
				u.Version = strings.Fields(l[i+len("version="):])[0]
				break
			}
			if strings.Contains(l, "UCT version") || strings.Contains(l, "Library version") {
				u.Version = strings.TrimSpace(l[strings.LastIndex(l, ":")+1:])
			}
		}
	}
	if out, err := run("ucx_info", "-d"); err == nil {
		u.Transports = ParseUCXTransports(out)
	}
	return u
}

// ParseUCXTransports extracts the transport names from `ucx_info -d`.
func ParseUCXTransports(out string) []string {
	seen := map[string]bool{}
	var ts []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if name, ok := strings.CutPrefix(l, "Transport:"); ok {
			name = strings.TrimSpace(name)
			if name != "" && !seen[name] {
				seen[name] = true
				ts = append(ts, name)
			}
		}
	}
	return ts
}

func run(name string, args ...string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).Output()
	return string(out), err
}

// DOCA describes DOCA Compress support.
type DOCA struct {
	Built  bool   `json:"built"` // this binary has the DOCA engine (-tags doca)
	SDK    string `json:"sdk,omitempty"`
	Status string `json:"status"`          // what the engine offloads, or why it does not run
	Error  string `json:"error,omitempty"` // the error kind when opening the device failed
}

// DetectDOCA reports whether the DOCA Compress library is installed.
func DetectDOCA(built bool) DOCA {
	d := DOCA{Built: built, SDK: findLib("libdoca_compress.so")}
	if d.SDK == "" {
		d.SDK = findLib("libdoca_compress.so.2")
	}
	if d.SDK == "" {
		if _, err := os.Stat("/opt/mellanox/doca"); err == nil {
			d.SDK = "/opt/mellanox/doca"
		}
	}
	return d
}
