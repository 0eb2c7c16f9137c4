//go:build doca && fakedoca

/* compiles the fake DOCA into the engine package for -tags 'doca fakedoca' */
#include "fakedoca/fakedoca.c"
