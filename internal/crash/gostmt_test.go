package crash

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every goroutine of the module starts through Go: a bare go statement in
// a non-test file starts one that a panic would end with the terminal still
// raw. The only go statement allowed is the one inside Go itself.
func TestEveryGoroutineStartsThroughGo(t *testing.T) {
	root := moduleRoot(t)
	bare, err := bareGoStatements(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range bare {
		t.Errorf("%s: bare go statement: start the goroutine with crash.Go, so a panic on it gives the terminal back", at)
	}
}

// The check finds what it is meant to find: a go statement in a non-test
// file, whether it starts a closure or a method, and nothing in a test file
// or a nested module.
func TestBareGoStatementsFindsThem(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("a/a.go", "package a\n\nfunc f(c chan int) {\n\tgo func() { c <- 1 }()\n}\n")
	write("b/b.go", "package b\n\ntype s struct{}\n\nfunc (s) run() {}\n\nfunc g(x s) {\n\tdefer func() {}()\n\tgo x.run()\n}\n")
	write("a/a_test.go", "package a\n\nfunc h() { go func() {}() }\n")
	write("nested/go.mod", "module example.com/n\n")
	write("nested/n.go", "package n\n\nfunc k() { go func() {}() }\n")
	bare, err := bareGoStatements(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join("a", "a.go") + ":4", filepath.Join("b", "b.go") + ":9"}
	if strings.Join(bare, ",") != strings.Join(want, ",") {
		t.Fatalf("found %q, want %q", bare, want)
	}
}

// bareGoStatements lists file:line of every go statement in the non-test Go
// files under root (nested modules, testdata and hidden directories left
// out), except the one in this package's Go.
func bareGoStatements(root string) ([]string, error) {
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Name.Name == "Go" && f.Name.Name == "crash" && filepath.ToSlash(rel) == "internal/crash/crash.go" {
				continue // the one go statement allowed
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				if g, ok := n.(*ast.GoStmt); ok {
					found = append(found, rel+":"+strconv.Itoa(fset.Position(g.Pos()).Line))
				}
				return true
			})
		}
		return nil
	})
	return found, err
}

// moduleRoot is the directory of the go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
