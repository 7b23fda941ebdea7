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
	b = protowire.AppendTag(b, modelIRVersion, protowire.VarintType)
	b = protowire.AppendVarint(b, irVersion)
	b = protowire.AppendTag(b, modelProducer, protowire.BytesType)
	b = protowire.AppendString(b, "narrator onnxtest")
	b = protowire.AppendTag(b, modelGraph, protowire.BytesType)
	b = protowire.AppendBytes(b, g.marshalGraph())
	var ob []byte // the default domain, ai.onnx, is the empty string, which proto3 leaves out
	ob = protowire.AppendTag(ob, opsetVersion, protowire.VarintType)
	ob = protowire.AppendVarint(ob, opset)
	b = protowire.AppendTag(b, modelOpsetImport, protowire.BytesType)
	return protowire.AppendBytes(b, ob)
}

// marshalGraph returns the GraphProto of g.
func (g graph) marshalGraph() []byte {
	var gb []byte
	for _, n := range g.nodes {
		gb = protowire.AppendTag(gb, graphNode, protowire.BytesType)
		gb = protowire.AppendBytes(gb, n.marshal())
	}
	gb = protowire.AppendTag(gb, graphName, protowire.BytesType)
	gb = protowire.AppendString(gb, g.name)
	for _, t := range g.inits {
		gb = protowire.AppendTag(gb, graphInitializer, protowire.BytesType)
		gb = protowire.AppendBytes(gb, t.marshal())
	}
	for _, v := range g.inputs {
		gb = protowire.AppendTag(gb, graphInput, protowire.BytesType)
		gb = protowire.AppendBytes(gb, v.marshal())
	}
	for _, v := range g.outputs {
		gb = protowire.AppendTag(gb, graphOutput, protowire.BytesType)
		gb = protowire.AppendBytes(gb, v.marshal())
	}
	return gb
}

func (n node) marshal() []byte {
	var b []byte
	for _, in := range n.inputs {
		b = protowire.AppendTag(b, nodeInput, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, out := range n.outputs {
		b = protowire.AppendTag(b, nodeOutput, protowire.BytesType)
		b = protowire.AppendString(b, out)
	}
	b = protowire.AppendTag(b, nodeOpType, protowire.BytesType)
	b = protowire.AppendString(b, n.op)
	for _, a := range n.attrs {
		var ab []byte
		ab = protowire.AppendTag(ab, attrName, protowire.BytesType)
		ab = protowire.AppendString(ab, a.name)
		ab = protowire.AppendTag(ab, attrInt, protowire.VarintType)
		ab = protowire.AppendVarint(ab, uint64(a.i))
		ab = protowire.AppendTag(ab, attrType, protowire.VarintType)
		ab = protowire.AppendVarint(ab, attrTypeInt)
		b = protowire.AppendTag(b, nodeAttribute, protowire.BytesType)
		b = protowire.AppendBytes(b, ab)
	}
	if n.body != nil {
		var ab []byte
		ab = protowire.AppendTag(ab, attrName, protowire.BytesType)
		ab = protowire.AppendString(ab, "body")
		ab = protowire.AppendTag(ab, attrGraph, protowire.BytesType)
		ab = protowire.AppendBytes(ab, n.body.marshalGraph())
		ab = protowire.AppendTag(ab, attrType, protowire.VarintType)
		ab = protowire.AppendVarint(ab, attrTypeGraph)
		b = protowire.AppendTag(b, nodeAttribute, protowire.BytesType)
		b = protowire.AppendBytes(b, ab)
	}
	return b
}

func (t initializer) marshal() []byte {
	var b []byte
	for _, d := range t.dims {
		b = protowire.AppendTag(b, tensorDims, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, tensorDataType, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.dtype))
	b = protowire.AppendTag(b, tensorName, protowire.BytesType)
	b = protowire.AppendString(b, t.name)
	b = protowire.AppendTag(b, tensorRawData, protowire.BytesType)
	b = protowire.AppendBytes(b, t.raw)
	return b
}

func (v value) marshal() []byte {
	var sb []byte
	for _, d := range v.shape {
		var db []byte
		if d.param != "" {
			db = protowire.AppendTag(db, dimParam, protowire.BytesType)
			db = protowire.AppendString(db, d.param)
		} else {
			db = protowire.AppendTag(db, dimValue, protowire.VarintType)
			db = protowire.AppendVarint(db, uint64(d.size))
		}
		sb = protowire.AppendTag(sb, shapeDim, protowire.BytesType)
		sb = protowire.AppendBytes(sb, db)
	}
	var tb []byte
	tb = protowire.AppendTag(tb, tensorElemType, protowire.VarintType)
	tb = protowire.AppendVarint(tb, uint64(v.dtype))
	tb = protowire.AppendTag(tb, tensorShape, protowire.BytesType)
	tb = protowire.AppendBytes(tb, sb)
	var typ []byte
	typ = protowire.AppendTag(typ, typeTensor, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tb)

	var b []byte
	b = protowire.AppendTag(b, valueName, protowire.BytesType)
	b = protowire.AppendString(b, v.name)
	b = protowire.AppendTag(b, valueType, protowire.BytesType)
	b = protowire.AppendBytes(b, typ)
	return b
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
