package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// With GOTENSOR_SERVE_ARGV0 set, the test binary runs main as the node
// would, under that argv[0].
func TestMain(m *testing.M) {
	if name := os.Getenv("GOTENSOR_SERVE_ARGV0"); name != "" {
		os.Args = append([]string{name}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// runMain runs main with args and returns its stderr and exit code.
func runMain(t *testing.T, argv0 string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GOTENSOR_SERVE_ARGV0="+argv0)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

func TestMisspelledFlagGetsTheUsageUnderTheNameRunAs(t *testing.T) {
	for _, argv0 := range []string{"gotensor serve", "/usr/local/bin/gotensor-serve"} {
		out, code := runMain(t, argv0, "--lisen", "127.0.0.1:0")
		name := argv0
		if strings.HasPrefix(argv0, "/") {
			name = "gotensor-serve"
		}
		if code != 2 || !strings.Contains(out, "flag provided but not defined: -lisen") ||
			!strings.Contains(out, "usage: "+name+" [flags]") || !strings.Contains(out, "-listen string") {
			t.Fatalf("%q: exit %d\n%s", argv0, code, out)
		}
	}
}

func TestHelpListsEveryFlagWithItsDefault(t *testing.T) {
	out, code := runMain(t, "gotensor serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{`(default "127.0.0.1:7707")`, `(default "tcp")`, "-capacity", "-dir", "-token-file",
		"-tls-cert", "-tls-key", "-metrics", "-pprof"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}
