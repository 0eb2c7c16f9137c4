package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// The node's flags are declared once, in main: `gotensor serve` execs this
// binary with its arguments as they are and argv[0] "gotensor serve", so a
// misspelled flag or -h gets this message, under the name it was run as.
func init() { flag.Usage = usage }

func usage() {
	w := flag.CommandLine.Output()
	fmt.Fprintf(w, "usage: %s [flags]\n\n", filepath.Base(os.Args[0]))
	fmt.Fprintln(w, "Runs a memory node: other processes reach its store as tcp://HOST:PORT or ucx://HOST:PORT.")
	fmt.Fprintln(w, "It prints \"gotensor serve: listening on URL ...\" once it accepts clients and stops on SIGTERM or Ctrl-C.")
	fmt.Fprintln(w, "\nflags (-flag or --flag):")
	flag.PrintDefaults()
}
