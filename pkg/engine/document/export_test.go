package document

// MaxRequestBodyBytes is the limit the package's tests reach for.
const MaxRequestBodyBytes = maxRequestBodyBytes

// IsJSON reports whether d was read from a JSON stream.
func IsJSON(d *Document) bool { return d.isJSON }
