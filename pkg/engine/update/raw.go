package update

// The keys of a raw schema under which the walk finds the schemas of a
// node's children: the fields of an object, the values of a map, the items
// of a list.
const (
	RawProperties           = "properties"
	RawAdditionalProperties = "additionalProperties"
	RawItems                = "items"
)

// RawStep is how a walk of a raw schema reaches a node from its parent.
type RawStep struct {
	// Key is RawProperties, RawAdditionalProperties or RawItems; "" at the
	// root, which no step reaches.
	Key string
	// Name is the property's name, under RawProperties.
	Name string
}

// RawWalk walks a raw openAPIV3Schema (as decoded from JSON or YAML), the
// schema as written: this package's parser and the lowering of the markers
// read the same nodes, in the same order. A node's children are its
// properties by name, then its additionalProperties, then its items, each
// where it is a schema (a map): items as a list of schemas, or
// additionalProperties as a boolean, have none to walk.
//
// The walk is recursive, one frame a level, and keeps nothing of its own
// per node: what a caller keeps of a node's ancestors (its path) is its
// value, which Enter makes from the parent's.
type RawWalk[T any] struct {
	// Enter is called on each node before its children, with the parent's
	// value (the value given to Walk, for the root) and the step from the
	// parent. It returns the node's value, which its children get, and
	// whether to walk them.
	Enter func(parent T, step RawStep, node map[string]interface{}) (T, bool)
	// Leave, when set, is called on each node after its children, with the
	// node's value: a parent sees what its children made of themselves.
	Leave func(node T)
	// ItemsFirst walks items before additionalProperties. A schema may have
	// both (the server accepts it, and reads the one its type says), and
	// the bounds of a lowered rule have always been named in this order.
	ItemsFirst bool
}

// Walk walks raw, whose parent's value is root.
func (w RawWalk[T]) Walk(raw map[string]interface{}, root T) {
	w.node(root, RawStep{}, raw)
}

func (w *RawWalk[T]) node(parent T, step RawStep, raw map[string]interface{}) {
	v, descend := w.Enter(parent, step, raw)
	if descend {
		if props, ok := raw[RawProperties].(map[string]interface{}); ok {
			for _, k := range sortedKeys(props) {
				if child, ok := props[k].(map[string]interface{}); ok {
					w.node(v, RawStep{Key: RawProperties, Name: k}, child)
				}
			}
		}
		last := [2]string{RawAdditionalProperties, RawItems}
		if w.ItemsFirst {
			last = [2]string{RawItems, RawAdditionalProperties}
		}
		for _, k := range last {
			if child, ok := raw[k].(map[string]interface{}); ok {
				w.node(v, RawStep{Key: k}, child)
			}
		}
	}
	if w.Leave != nil {
		w.Leave(v)
	}
}
