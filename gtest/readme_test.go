package gtest

import (
	"bytes"
	"context"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The README's first example is a complete program whose func main has the
// body of Example in workers/example_test.go; that Example's "// Output:"
// is what the program prints, and the README says so after the program.
const (
	readmePath      = "../README.md"
	exampleTestPath = "../workers/example_test.go"
	exampleName     = "Example"
)

// firstGoBlock returns the first ```go block of the markdown text md.
func firstGoBlock(t *testing.T, md string) string {
	t.Helper()
	m := regexp.MustCompile("(?ms)^```go\n(.*?)^```$").FindStringSubmatch(md)
	require.NotNil(t, m, "%s has no ```go block", readmePath)
	return m[1]
}

// funcBody parses src (a Go file, named name in messages) and returns the
// text between the braces of its top-level func fn, without the comment
// that starts with "Output:" and what follows it, and that comment's text
// (the expected output, "" if there is none).
func funcBody(t *testing.T, name, src, fn string) (body, output string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	require.NoError(t, err, "%s does not parse", name)
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != fn {
			continue
		}
		lo, hi := fset.Position(fd.Body.Lbrace).Offset+1, fset.Position(fd.Body.Rbrace).Offset
		for _, cg := range f.Comments {
			if cg.Pos() < fd.Body.Lbrace || cg.End() > fd.Body.Rbrace {
				continue
			}
			if text, ok := strings.CutPrefix(cg.Text(), "Output:"); ok {
				hi, output = fset.Position(cg.Pos()).Offset, strings.TrimSpace(text)
				break
			}
		}
		return strings.TrimSpace(src[lo:hi]), output
	}
	t.Fatalf("%s has no func %s", name, fn)
	return "", ""
}

// readmeProgram returns the README's first Go block, checked to be a
// gofmt-formatted main package, and the Example's body and output.
func readmeProgram(t *testing.T) (program, exampleBody, exampleOutput string) {
	t.Helper()
	md, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	program = firstGoBlock(t, string(md))
	require.True(t, strings.HasPrefix(program, "package main\n"),
		"the first Go block of %s must be a complete program (package main):\n%s", readmePath, program)
	formatted, err := format.Source([]byte(program))
	require.NoError(t, err, "the first Go block of %s does not parse", readmePath)
	require.Equal(t, string(formatted), program, "the first Go block of %s is not gofmt-formatted", readmePath)
	src, err := os.ReadFile(exampleTestPath)
	require.NoError(t, err)
	exampleBody, exampleOutput = funcBody(t, exampleTestPath, string(src), exampleName)
	require.NotEmpty(t, exampleOutput, "%s: %s has no // Output: comment", exampleTestPath, exampleName)
	return program, exampleBody, exampleOutput
}

// TestReadmeExampleIsTheExample checks that the README's first example, a
// complete program, has the body of Example in workers/example_test.go (which
// go test runs and checks against its output), and that the README states
// that output right after the program.
func TestReadmeExampleIsTheExample(t *testing.T) {
	program, exampleBody, exampleOutput := readmeProgram(t)
	mainBody, _ := funcBody(t, readmePath, program, "main")
	require.Equal(t, exampleBody, mainBody,
		"the body of func main in the first Go block of %s and the body of %s in %s differ: change both",
		readmePath, exampleName, exampleTestPath)
	md, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, after, _ := strings.Cut(string(md), program+"```\n")
	next, _, _ := strings.Cut(strings.TrimSpace(after), "\n\n") // the paragraph after the program
	require.Contains(t, next, "prints `"+exampleOutput+"`",
		"%s must say what its first example prints (%s's // Output:)", readmePath, exampleName)
}

// TestReadmeExampleRuns runs the README's first example with go run, as a
// program of its own that imports the module, and checks that it prints
// the Example's output: its imports and package clause are right too. It
// builds a program, so -short skips it (except under CI).
func TestReadmeExampleRuns(t *testing.T) {
	if testing.Short() && !underCI() {
		t.Skip("-short: the README's example program is not built and run")
	}
	program, _, exampleOutput := readmeProgram(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(file, []byte(program), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Run from the module root: a file outside any module builds against the
	// current module, so the program imports this working tree's packages.
	cmd := exec.CommandContext(ctx, "go", "run", file)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go run of the first Go block of %s failed:\n%s", readmePath, stderr.String())
	require.Equal(t, exampleOutput, strings.TrimSpace(string(out)), "the README's example printed something else")
}

// TestReadmeInstallNamesTheLatestRelease checks that the README's install
// section tells how to depend on the latest release of CHANGELOG.md (its
// first "## vX.Y.Z (commit C, untagged)" heading): no version is tagged, so
// it must show go get of that commit, never @latest or a version tag that go
// get cannot find.
func TestReadmeInstallNamesTheLatestRelease(t *testing.T) {
	changelog, err := os.ReadFile("../CHANGELOG.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^## (v\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40}), untagged\)\s*$`).FindSubmatch(changelog)
	require.NotNil(t, m, "CHANGELOG.md has no release heading (## vX.Y.Z (commit C, untagged))")
	version, commit := string(m[1]), string(m[2])
	md, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, install, ok := strings.Cut(string(md), "\n## Install\n")
	require.True(t, ok, "%s has no ## Install section", readmePath)
	install, _, _ = strings.Cut(install, "\n## ")
	require.Contains(t, install, "go get github.com/workgang/workgang@"+commit+" # "+version,
		"%s's install section must show go get of the latest release's commit", readmePath)
	require.Contains(t, install, "replace github.com/workgang/workgang => ", "and a replace pointing at a checkout")
	require.NotRegexp(t, `@latest|@v\d`, install, "no version is tagged: @vX.Y.Z does not resolve, and @latest is whichever commit is newest")
}

// TestReadmeLibraryTestCommand checks that the README gives the library's own
// test command, GOWORK=off go test ./..., beside go test work for every
// module, and that with GOWORK=off the root's module graph holds only the
// library's go.mod requirements: the command fetches nothing of perf's or
// the examples' (plotting, fonts, peers). The graph check runs the go
// command, so -short skips it (except under CI).
func TestReadmeLibraryTestCommand(t *testing.T) {
	md, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, commands, ok := strings.Cut(string(md), "\n## Commands\n")
	require.True(t, ok, "%s has no ## Commands section", readmePath)
	for _, cmd := range []string{"GOWORK=off go test ./...", "go test work"} {
		require.Contains(t, commands, "```sh\n"+cmd+"\n```", "%s's Commands must show %q", readmePath, cmd)
	}
	if testing.Short() && !underCI() {
		t.Skip("-short: the module graph is not listed")
	}
	requires := func(file string) map[string]string { // path -> version
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		reqs := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]+/\S+) (v\S+)`).FindAllSubmatch(src, -1) {
			reqs[string(m[1])] = string(m[2])
		}
		return reqs
	}
	library := requires("../go.mod")
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	require.NoError(t, err, "GOWORK=off go list -m all")
	graph := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			graph[f[0]] = f[1]
		}
	}
	for path, version := range library {
		require.Equal(t, version, graph[path], "GOWORK=off builds the library with its go.mod's %s", path)
	}
	for _, other := range []string{"../perf/go.mod", "../examples/go.mod"} {
		for path := range requires(other) {
			if _, mine := library[path]; !mine && !strings.HasPrefix(path, "github.com/workgang/") {
				require.NotContains(t, graph, path, "GOWORK=off: the library's module graph holds %s, a requirement of %s only", path, other)
			}
		}
	}
}
