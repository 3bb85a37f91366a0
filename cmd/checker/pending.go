package main

import (
	"context"
	"errors"
	"io"
)

// Commands whose packages are still being built; each moves to its own file
// as it lands.
var errNotBuilt = errors.New("this command is not built yet")

func cmdRun(context.Context, []string, io.Writer, io.Writer) error  { return errNotBuilt }
func cmdOnce(context.Context, []string, io.Writer, io.Writer) error { return errNotBuilt }
