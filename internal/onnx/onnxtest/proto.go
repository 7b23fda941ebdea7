package onnxtest

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few parts of ONNX's protobuf schema (onnx.proto) that the models here need, written by
// hand with protowire: field numbers, and the element types of TensorProto.DataType.
const (
	modelIRVersion   = 1 // ModelProto.ir_version
	modelProducer    = 2 // ModelProto.producer_name
	modelGraph       = 7 // ModelProto.graph
	modelOpsetImport = 8 // ModelProto.opset_import
	opsetVersion     = 2 // OperatorSetIdProto.version

	graphNode        = 1  // GraphProto.node
	graphName        = 2  // GraphProto.name
	graphInitializer = 5  // GraphProto.initializer
	graphInput       = 11 // GraphProto.input
	graphOutput      = 12 // GraphProto.output

	nodeInput     = 1 // NodeProto.input
	nodeOutput    = 2 // NodeProto.output
	nodeOpType    = 4 // NodeProto.op_type
	nodeAttribute = 5 // NodeProto.attribute

	attrName      = 1  // AttributeProto.name
	attrInt       = 3  // AttributeProto.i
	attrGraph     = 6  // AttributeProto.g
	attrType      = 20 // AttributeProto.type
	attrTypeInt   = 2  // AttributeProto.AttributeType.INT
	attrTypeGraph = 5  // AttributeProto.AttributeType.GRAPH

	tensorDims     = 1 // TensorProto.dims
	tensorDataType = 2 // TensorProto.data_type
	tensorName     = 8 // TensorProto.name
	tensorRawData  = 9 // TensorProto.raw_data

	valueName       = 1 // ValueInfoProto.name
	valueType       = 2 // ValueInfoProto.type
	typeTensor      = 1 // TypeProto.tensor_type
	tensorElemType  = 1 // TypeProto.Tensor.elem_type
	tensorShape     = 2 // TypeProto.Tensor.shape
	shapeDim        = 1 // TensorShapeProto.dim
	dimValue        = 1 // TensorShapeProto.Dimension.dim_value
	dimParam        = 2 // TensorShapeProto.Dimension.dim_param
	dataTypeFloat32 = 1
	dataTypeInt32   = 6
	dataTypeInt64   = 7
	dataTypeBool    = 9

	// irVersion and opset are those of the ONNX 1.14 era, which onnxruntime 1.16 and later
	// read; Piper's and Kokoro's exports are of opsets 15 to 20.
	irVersion = 9
	opset     = 17
)

// dim is one dimension of a graph input or output: a size, or a name for a free one.
type dim struct {
	size  int64
	param string
}

// value is a graph input or output.
type value struct {
	name  string
	dtype int
	shape []dim
}

// node is one operator of the graph.
type node struct {
	op      string
	inputs  []string
	outputs []string
	attrs   []attr
	body    *graph // the attribute "body", of Loop
}

// attr is an integer attribute of a node.
type attr struct {
	name string
	i    int64
}

// initializer is a constant tensor of the graph.
type initializer struct {
	name  string
	dtype int
	dims  []int64
	raw   []byte // little-endian elements
}

// graph is a whole model.
type graph struct {
	name    string
	inputs  []value
	outputs []value
	nodes   []node
	inits   []initializer
}

// marshal returns the ModelProto of g.
func (g graph) marshal() []byte {
	var b []byte
	b = appendVarint(b, modelIRVersion, irVersion)
	b = appendString(b, modelProducer, "narrator onnxtest")
	b = appendBytes(b, modelGraph, g.marshalGraph())
	// The default domain, ai.onnx, is the empty string, which proto3 leaves out.
	return appendBytes(b, modelOpsetImport, appendVarint(nil, opsetVersion, opset))
}

// marshalGraph returns the GraphProto of g.
func (g graph) marshalGraph() []byte {
	var gb []byte
	for _, n := range g.nodes {
		gb = appendBytes(gb, graphNode, n.marshal())
	}
	gb = appendString(gb, graphName, g.name)
	for _, t := range g.inits {
		gb = appendBytes(gb, graphInitializer, t.marshal())
	}
	for _, v := range g.inputs {
		gb = appendBytes(gb, graphInput, v.marshal())
	}
	for _, v := range g.outputs {
		gb = appendBytes(gb, graphOutput, v.marshal())
	}
	return gb
}

func (n node) marshal() []byte {
	var b []byte
	for _, in := range n.inputs {
		b = appendString(b, nodeInput, in)
	}
	for _, out := range n.outputs {
		b = appendString(b, nodeOutput, out)
	}
	b = appendString(b, nodeOpType, n.op)
	for _, a := range n.attrs {
		ab := appendString(nil, attrName, a.name)
		ab = appendVarint(ab, attrInt, uint64(a.i))
		ab = appendVarint(ab, attrType, attrTypeInt)
		b = appendBytes(b, nodeAttribute, ab)
	}
	if n.body != nil {
		ab := appendString(nil, attrName, "body")
		ab = appendBytes(ab, attrGraph, n.body.marshalGraph())
		ab = appendVarint(ab, attrType, attrTypeGraph)
		b = appendBytes(b, nodeAttribute, ab)
	}
	return b
}

func (t initializer) marshal() []byte {
	var b []byte
	for _, d := range t.dims {
		b = appendVarint(b, tensorDims, uint64(d))
	}
	b = appendVarint(b, tensorDataType, uint64(t.dtype))
	b = appendString(b, tensorName, t.name)
	return appendBytes(b, tensorRawData, t.raw)
}

func (v value) marshal() []byte {
	var sb []byte
	for _, d := range v.shape {
		var db []byte
		if d.param != "" {
			db = appendString(nil, dimParam, d.param)
		} else {
			db = appendVarint(nil, dimValue, uint64(d.size))
		}
		sb = appendBytes(sb, shapeDim, db)
	}
	tb := appendVarint(nil, tensorElemType, uint64(v.dtype))
	tb = appendBytes(tb, tensorShape, sb)
	b := appendString(nil, valueName, v.name)
	return appendBytes(b, valueType, appendBytes(nil, typeTensor, tb))
}

// appendVarint appends the field num of b's message, an integer.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

// appendBytes appends the field num of b's message, a length-delimited value: bytes or an
// embedded message.
func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// appendString appends the field num of b's message, a string.
func appendString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

// int64s returns an int64 initializer of shape dims.
func int64s(name string, dims []int64, v ...int64) initializer {
	raw := make([]byte, 0, 8*len(v))
	for _, x := range v {
		raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
	}
	return initializer{name: name, dtype: dataTypeInt64, dims: dims, raw: raw}
}

// float32s returns a float32 initializer of shape dims.
func float32s(name string, dims []int64, v ...float32) initializer {
	raw := make([]byte, 0, 4*len(v))
	for _, x := range v {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
	}
	return initializer{name: name, dtype: dataTypeFloat32, dims: dims, raw: raw}
}
