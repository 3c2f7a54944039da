package document

// MaxRequestBodyBytes is the limit the package's tests reach for.
const MaxRequestBodyBytes = maxRequestBodyBytes
