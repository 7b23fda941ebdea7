package neural

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrNotAlignable is matched (errors.Is) by MarkDurations' error for a model that has not
// exactly one Ceil node: its phonemes' lengths cannot be told, and its voice keeps sentence
// timings.
var ErrNotAlignable = errors.New("the model has not exactly one Ceil node, which gives each phoneme's length (w_ceil): it keeps sentence timings")

// The fields of the ONNX protobuf messages that MarkDurations reads and writes (onnx.proto).
const (
	fieldModelGraph       = 7  // ModelProto.graph
	fieldGraphNode        = 1  // GraphProto.node
	fieldGraphOutput      = 12 // GraphProto.output
	fieldNodeOutput       = 2  // NodeProto.output
	fieldNodeOpType       = 4  // NodeProto.op_type
	fieldValueName        = 1  // ValueInfoProto.name
	fieldValueType        = 2  // ValueInfoProto.type
	fieldTypeTensor       = 1  // TypeProto.tensor_type
	fieldTensorElemType   = 1  // TypeProto.Tensor.elem_type
	onnxFloat32           = 1  // TensorProto.DataType.FLOAT
	maxDurationsNameBytes = 1 << 10
)

// MarkDurations returns a Piper (VITS) model, an ONNX ModelProto, with the output of its
// single Ceil node, w_ceil (each phoneme ID's length in frames), added as a second graph
// output, as piper1-gpl's patch_voice_with_alignment does; and that output's name. The model
// runs as before, and also says how long each ID lasts. A model whose Ceil output is already
// an output is returned as it is. A model with no Ceil node, or several, gives an error
// matching ErrNotAlignable. model itself is not changed.
func MarkDurations(model []byte) (patched []byte, output string, err error) {
	var graph []byte
	graphs := 0
	if err := eachField(model, func(num protowire.Number, val []byte) error {
		if num == fieldModelGraph {
			graph, graphs = val, graphs+1
		}
		return nil
	}); err != nil {
		return nil, "", fmt.Errorf("read the model: %w", err)
	}
	if graphs != 1 {
		return nil, "", fmt.Errorf("read the model: %d graphs, want one", graphs)
	}
	var ceils []string
	outputs := map[string]bool{}
	err = eachField(graph, func(num protowire.Number, val []byte) error {
		switch num {
		case fieldGraphNode:
			op, out, err := nodeOpOutput(val)
			if err != nil {
				return err
			}
			if op == "Ceil" && out != "" {
				ceils = append(ceils, out)
			}
		case fieldGraphOutput:
			return eachField(val, func(num protowire.Number, v []byte) error {
				if num == fieldValueName {
					outputs[string(v)] = true
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("read the model's graph: %w", err)
	}
	if len(ceils) != 1 {
		return nil, "", fmt.Errorf("%w (it has %d)", ErrNotAlignable, len(ceils))
	}
	output = ceils[0]
	if len(output) > maxDurationsNameBytes {
		return nil, "", fmt.Errorf("the Ceil node's output name is %d bytes long", len(output))
	}
	if outputs[output] {
		return model, output, nil
	}
	// ValueInfoProto{name, type: TypeProto{tensor_type: {elem_type: FLOAT}}}, its shape left
	// to the runtime, appended to the graph's outputs.
	var tensor, typ, value []byte
	tensor = protowire.AppendTag(tensor, fieldTensorElemType, protowire.VarintType)
	tensor = protowire.AppendVarint(tensor, onnxFloat32)
	typ = protowire.AppendTag(typ, fieldTypeTensor, protowire.BytesType)
	typ = protowire.AppendBytes(typ, tensor)
	value = protowire.AppendTag(value, fieldValueName, protowire.BytesType)
	value = protowire.AppendString(value, output)
	value = protowire.AppendTag(value, fieldValueType, protowire.BytesType)
	value = protowire.AppendBytes(value, typ)
	newGraph := make([]byte, 0, len(graph)+len(value)+8)
	newGraph = append(newGraph, graph...)
	newGraph = protowire.AppendTag(newGraph, fieldGraphOutput, protowire.BytesType)
	newGraph = protowire.AppendBytes(newGraph, value)

	patched = make([]byte, 0, len(model)+len(value)+16)
	for b := model; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num == fieldModelGraph {
			patched = protowire.AppendTag(patched, fieldModelGraph, protowire.BytesType)
			patched = protowire.AppendBytes(patched, newGraph)
		} else {
			patched = append(patched, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return patched, output, nil
}

// nodeOpOutput returns a NodeProto's op_type and first output.
func nodeOpOutput(node []byte) (op, out string, err error) {
	outs := 0
	err = eachField(node, func(num protowire.Number, val []byte) error {
		switch num {
		case fieldNodeOpType:
			op = string(val)
		case fieldNodeOutput:
			if outs == 0 {
				out = string(val)
			}
			outs++
		}
		return nil
	})
	return op, out, err
}

// eachField calls fn with each length-delimited field of the protobuf message b, in order,
// and skips the others. It fails on a malformed message.
func eachField(b []byte, fn func(num protowire.Number, val []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(m))
		}
		if typ == protowire.BytesType {
			val, _ := protowire.ConsumeBytes(b[n:])
			if err := fn(num, val); err != nil {
				return err
			}
		}
		b = b[n+m:]
	}
	return nil
}
