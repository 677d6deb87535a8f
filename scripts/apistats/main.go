// Command apistats counts the public surface and the size of a tree of Go
// packages: exported top-level names (types, funcs, vars, consts),
// exported methods, the largest file and the largest function, leaving
// out tests. It is how issue 26 measures the wire packages:
//
//	go run ./scripts/apistats formats
//
// prints a line per package and the totals; packages under internal/
// count apart, as they are no public surface. Names and methods together
// are the "exported names" of issue 26 (226 at its start, 2b6cb33).
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stats are the counts of one package or of a tree.
type stats struct {
	types, funcs, vars, consts, methods int
	file                                string
	fileLines                           int
	fn                                  string
	fnLines                             int
}

func (s stats) names() int { return s.types + s.funcs + s.vars + s.consts }

// add counts the declarations of one parsed file.
func (s *stats) add(fset *token.FileSet, path string, f *ast.File) {
	if n := fset.Position(f.End()).Line; n > s.fileLines {
		s.file, s.fileLines = path, n
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if n := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1; n > s.fnLines {
				s.fn, s.fnLines = path+":"+d.Name.Name, n
			}
			switch {
			case !d.Name.IsExported():
			case d.Recv == nil:
				s.funcs++
			case exportedRecv(d.Recv.List[0].Type):
				s.methods++
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					if spec.Name.IsExported() {
						s.types++
					}
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						switch {
						case !n.IsExported():
						case d.Tok == token.CONST:
							s.consts++
						default:
							s.vars++
						}
					}
				}
			}
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported, so
// that the method is part of the surface.
func exportedRecv(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// merge adds o's counts to s and keeps the larger file and function.
func (s *stats) merge(o stats) {
	s.types += o.types
	s.funcs += o.funcs
	s.vars += o.vars
	s.consts += o.consts
	s.methods += o.methods
	if o.fileLines > s.fileLines {
		s.file, s.fileLines = o.file, o.fileLines
	}
	if o.fnLines > s.fnLines {
		s.fn, s.fnLines = o.fn, o.fnLines
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: apistats DIR")
		os.Exit(2)
	}
	root := os.Args[1]
	fset := token.NewFileSet()
	pkgs := map[string]*stats{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		if pkgs[dir] == nil {
			pkgs[dir] = &stats{}
		}
		pkgs[dir].add(fset, path, f)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "apistats:", err)
		os.Exit(1)
	}
	dirs := make([]string, 0, len(pkgs))
	for dir := range pkgs {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	var public, internal stats
	fmt.Printf("%-34s %5s %5s %5s %5s %5s %7s\n", "package", "names", "types", "funcs", "vars", "const", "methods")
	for _, dir := range dirs {
		s := *pkgs[dir]
		fmt.Printf("%-34s %5d %5d %5d %5d %5d %7d\n", dir, s.names(), s.types, s.funcs, s.vars, s.consts, s.methods)
		if strings.Contains(filepath.ToSlash(dir)+"/", "/internal/") {
			internal.merge(s)
		} else {
			public.merge(s)
		}
	}
	fmt.Printf("exported names %d (types %d, funcs %d, vars %d, consts %d), exported methods %d, together %d\n",
		public.names(), public.types, public.funcs, public.vars, public.consts, public.methods, public.names()+public.methods)
	if internal.names()+internal.methods > 0 {
		fmt.Printf("under internal/: exported names %d, exported methods %d\n", internal.names(), internal.methods)
	}
	public.merge(internal)
	fmt.Printf("largest file %s (%d lines)\nlargest function %s (%d lines)\n", public.file, public.fileLines, public.fn, public.fnLines)
}
