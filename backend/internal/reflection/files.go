package reflection

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// errNoDescriptor is a file the registry knows whose descriptor no type of
// it carries (a file of services alone).
var errNoDescriptor = errors.New("no compiled descriptor")

// filesByPath is the file at path and those it imports not sent yet.
func filesByPath(path string, sent map[string]bool) ([][]byte, error) {
	fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
	if err != nil {
		return nil, err
	}
	return withImports(fd, sent)
}

// filesBySymbol is the file that declares symbol (a message, enum,
// service, method, field…) and those it imports not sent yet.
func filesBySymbol(symbol string, sent map[string]bool) ([][]byte, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(symbol))
	if err != nil {
		return nil, err
	}
	return withImports(d.ParentFile(), sent)
}

// filesByExtension is the file that declares extension number of message
// and those it imports not sent yet.
func filesByExtension(message string, number int32, sent map[string]bool) ([][]byte, error) {
	xt, err := protoregistry.GlobalTypes.FindExtensionByNumber(protoreflect.FullName(message), protoreflect.FieldNumber(number))
	if err != nil {
		return nil, err
	}
	return withImports(xt.TypeDescriptor().ParentFile(), sent)
}

// extensionNumbers lists the numbers of message's known extensions, in
// order; a message nobody knows is not found.
func extensionNumbers(message string) ([]int32, error) {
	name := protoreflect.FullName(message)
	var nums []int32
	protoregistry.GlobalTypes.RangeExtensionsByMessage(name, func(xt protoreflect.ExtensionType) bool {
		nums = append(nums, int32(xt.TypeDescriptor().Number()))
		return true
	})
	if len(nums) == 0 {
		if _, err := protoregistry.GlobalFiles.FindDescriptorByName(name); err != nil {
			return nil, err
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// withImports is root's serialized descriptor followed by those of the
// files it imports, directly or not, that sent does not hold; each one
// returned is added to sent. The root is always returned: the client
// asked for it.
func withImports(root protoreflect.FileDescriptor, sent map[string]bool) ([][]byte, error) {
	if root == nil || root.IsPlaceholder() {
		return nil, protoregistry.NotFound
	}
	var out [][]byte
	seen := map[string]bool{}
	queue := []protoreflect.FileDescriptor{root}
	for len(queue) > 0 {
		fd := queue[0]
		queue = queue[1:]
		if fd.IsPlaceholder() || seen[fd.Path()] {
			continue
		}
		seen[fd.Path()] = true
		if fd == root || !sent[fd.Path()] {
			b, err := compiled(fd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fd.Path(), err)
			}
			sent[fd.Path()] = true
			out = append(out, b)
		}
		imports := fd.Imports()
		for i := range imports.Len() {
			queue = append(queue, imports.Get(i).FileDescriptor)
		}
	}
	return out, nil
}

// legacyMessage and legacyEnum are the methods protoc-gen-go still gives
// every message and enum: they return their file's descriptor, the
// serialized FileDescriptorProto the generated code registers, gzipped.
// Reading it from there sends the file exactly as it was compiled, with
// no package of descriptor conversions to initialise (protodesc).
type (
	legacyMessage interface{ Descriptor() ([]byte, []int) }
	legacyEnum    interface{ EnumDescriptor() ([]byte, []int) }
)

// compiled is fd's serialized FileDescriptorProto, from the generated
// code of one of its messages or enums.
func compiled(fd protoreflect.FileDescriptor) ([]byte, error) {
	var gz []byte
	if msgs := fd.Messages(); msgs.Len() > 0 {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(msgs.Get(0).FullName())
		if err != nil {
			return nil, err
		}
		m, ok := mt.New().Interface().(legacyMessage)
		if !ok {
			return nil, errNoDescriptor
		}
		gz, _ = m.Descriptor()
	} else if enums := fd.Enums(); enums.Len() > 0 {
		et, err := protoregistry.GlobalTypes.FindEnumByName(enums.Get(0).FullName())
		if err != nil {
			return nil, err
		}
		e, ok := et.New(0).(legacyEnum)
		if !ok {
			return nil, errNoDescriptor
		}
		gz, _ = e.EnumDescriptor()
	} else {
		return nil, errNoDescriptor
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
