package refusal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// No exported function or method of the actions returns a concrete error
// type (*refusal.Error, *create.Error, ...): a nil one returned that way is
// a non-nil error, and `if err != nil` takes a success for a failure (the
// typed-nil trap). They return error; callers use errors.As.
func TestActionsReturnErrorNotAConcreteType(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The error types: whatever has an Error() string method, by
	// package.Type (the actions import each other by their own names).
	errorTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Error" &&
				fn.Type.Params.NumFields() == 0 && fn.Type.Results.NumFields() == 1 {
				errorTypes[f.Name.Name+"."+baseType(fn.Recv.List[0].Type)] = true
			}
		}
	}
	if !errorTypes["refusal.Error"] || !errorTypes["create.Error"] {
		t.Fatalf("error types found: %v; the scan is broken", errorTypes)
	}

	checked := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || fn.Type.Results == nil {
				continue
			}
			if fn.Recv != nil && !ast.IsExported(baseType(fn.Recv.List[0].Type)) {
				continue
			}
			checked++
			for _, res := range fn.Type.Results.List {
				if name := typeName(f.Name.Name, res.Type); errorTypes[name] {
					t.Errorf("%s: %s returns %s; return error instead", fset.Position(fn.Pos()), fn.Name.Name, types.ExprString(res.Type))
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d exported functions checked; the scan is broken", checked)
	}
}

// baseType is the name of a receiver's type, without * or type parameters.
func baseType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return baseType(e.X)
	case *ast.IndexExpr:
		return baseType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// typeName is package.Type for a named type (or a pointer to one) written
// in package pkg, else "".
func typeName(pkg string, e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return pkg + "." + e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return ""
}
