package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// Every call of a Mem that takes a context reaches the store's keys, so
// MemHandle must define it itself, refusing it once the handle is closed:
// a promoted one would go on reaching the store that other handles share.
func TestMemHandleGuardsEveryKeyedCall(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, 0)
	must(t, err)
	methods := map[string]map[string]*ast.FuncDecl{} // receiver type -> name -> decl
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || !fn.Name.IsExported() {
					continue
				}
				star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
				if !ok {
					continue
				}
				id, ok := star.X.(*ast.Ident)
				if !ok {
					continue
				}
				if methods[id.Name] == nil {
					methods[id.Name] = map[string]*ast.FuncDecl{}
				}
				methods[id.Name][fn.Name.Name] = fn
			}
		}
	}
	if len(methods["Mem"]) == 0 {
		t.Fatal("no methods of Mem found")
	}
	for name, fn := range methods["Mem"] {
		ps := fn.Type.Params.List
		if len(ps) == 0 {
			continue
		}
		sel, ok := ps[0].Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Context" {
			continue
		}
		if _, ok := methods["MemHandle"][name]; !ok {
			t.Errorf("MemHandle does not guard Mem.%s: a closed handle would still reach the shared store", name)
		}
	}
}
