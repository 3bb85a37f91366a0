// Package architecture holds no code. Its tests keep the module's structure
// true to docs/architecture.md and .golangci.yml: the package map names
// every package, the lint's pure-package rules name every package that does
// no I/O, and no function of the packages that talk to the world or wire
// them grows past a screen unless the page says why.
package architecture
