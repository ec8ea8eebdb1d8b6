// The ONNX protobuf schema as a protobufjs JSON descriptor, for decoding and re-encoding
// real exports (model-proto.ts). Transcribed field for field from the ONNX project's
// onnx/onnx-ml.proto (IR version 11: onnx.proto plus the ONNX-ML TypeProto.Opaque, which
// is what onnxruntime parses): every message, field number and packing of that file, so a
// decode → encode round trip drops nothing a real export holds.
//
// ONNX: Copyright (c) ONNX Project Contributors. Licensed under the Apache License,
// Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0). This descriptor is a
// derivative of that schema and keeps its field names (snake_case) and numbers.
//
// onnx.proto is proto2: repeated scalars are unpacked except the TensorProto data fields
// marked [packed = true]; both are written here explicitly, since protobufjs's JSON
// descriptors otherwise default to proto3's packing.
import type { INamespace } from 'protobufjs';

type Rule = 'repeated' | undefined;
interface FieldDesc {
  id: number;
  type: string;
  rule?: 'repeated';
  options?: { packed: boolean };
}

const SCALARS = new Set(['float', 'double', 'int32', 'int64', 'uint64', 'bool']);

/** A field; repeated scalars carry their proto2 packing explicitly. */
function f(id: number, type: string, rule?: Rule, packed = false): FieldDesc {
  if (rule !== 'repeated') return { id, type };
  return SCALARS.has(type) ? { id, type, rule, options: { packed } } : { id, type, rule };
}
const repeated = (id: number, type: string) => f(id, type, 'repeated');
const packed = (id: number, type: string) => f(id, type, 'repeated', true);

export const ONNX_SCHEMA: INamespace = {
  nested: {
    onnx: {
      nested: {
        Version: {
          values: {
            _START_VERSION: 0,
            IR_VERSION_2017_10_10: 1,
            IR_VERSION_2017_10_30: 2,
            IR_VERSION_2017_11_3: 3,
            IR_VERSION_2019_1_22: 4,
            IR_VERSION_2019_3_18: 5,
            IR_VERSION_2019_9_19: 6,
            IR_VERSION_2020_5_8: 7,
            IR_VERSION_2021_7_30: 8,
            IR_VERSION_2023_5_5: 9,
            IR_VERSION_2024_3_25: 10,
            IR_VERSION: 11,
          },
        },
        AttributeProto: {
          fields: {
            name: f(1, 'string'),
            ref_attr_name: f(21, 'string'),
            doc_string: f(13, 'string'),
            type: f(20, 'AttributeType'),
            f: f(2, 'float'),
            i: f(3, 'int64'),
            s: f(4, 'bytes'),
            t: f(5, 'TensorProto'),
            g: f(6, 'GraphProto'),
            sparse_tensor: f(22, 'SparseTensorProto'),
            tp: f(14, 'TypeProto'),
            floats: repeated(7, 'float'),
            ints: repeated(8, 'int64'),
            strings: repeated(9, 'bytes'),
            tensors: repeated(10, 'TensorProto'),
            graphs: repeated(11, 'GraphProto'),
            sparse_tensors: repeated(23, 'SparseTensorProto'),
            type_protos: repeated(15, 'TypeProto'),
          },
          reserved: [[12, 12], [16, 19], 'v'],
          nested: {
            AttributeType: {
              values: {
                UNDEFINED: 0,
                FLOAT: 1,
                INT: 2,
                STRING: 3,
                TENSOR: 4,
                GRAPH: 5,
                SPARSE_TENSOR: 11,
                TYPE_PROTO: 13,
                FLOATS: 6,
                INTS: 7,
                STRINGS: 8,
                TENSORS: 9,
                GRAPHS: 10,
                SPARSE_TENSORS: 12,
                TYPE_PROTOS: 14,
              },
            },
          },
        },
        ValueInfoProto: {
          fields: {
            name: f(1, 'string'),
            type: f(2, 'TypeProto'),
            doc_string: f(3, 'string'),
            metadata_props: repeated(4, 'StringStringEntryProto'),
          },
        },
        NodeProto: {
          fields: {
            input: repeated(1, 'string'),
            output: repeated(2, 'string'),
            name: f(3, 'string'),
            op_type: f(4, 'string'),
            domain: f(7, 'string'),
            overload: f(8, 'string'),
            attribute: repeated(5, 'AttributeProto'),
            doc_string: f(6, 'string'),
            metadata_props: repeated(9, 'StringStringEntryProto'),
            device_configurations: repeated(10, 'NodeDeviceConfigurationProto'),
          },
        },
        IntIntListEntryProto: {
          fields: { key: f(1, 'int64'), value: repeated(2, 'int64') },
        },
        NodeDeviceConfigurationProto: {
          fields: {
            configuration_id: f(1, 'string'),
            sharding_spec: repeated(2, 'ShardingSpecProto'),
            pipeline_stage: f(3, 'int32'),
          },
        },
        ShardingSpecProto: {
          fields: {
            tensor_name: f(1, 'string'),
            device: repeated(2, 'int64'),
            index_to_device_group_map: repeated(3, 'IntIntListEntryProto'),
            sharded_dim: repeated(4, 'ShardedDimProto'),
          },
        },
        ShardedDimProto: {
          fields: { axis: f(1, 'int64'), simple_sharding: repeated(2, 'SimpleShardedDimProto') },
        },
        SimpleShardedDimProto: {
          oneofs: { dim: { oneof: ['dim_value', 'dim_param'] } },
          fields: { dim_value: f(1, 'int64'), dim_param: f(2, 'string'), num_shards: f(3, 'int64') },
        },
        TrainingInfoProto: {
          fields: {
            initialization: f(1, 'GraphProto'),
            algorithm: f(2, 'GraphProto'),
            initialization_binding: repeated(3, 'StringStringEntryProto'),
            update_binding: repeated(4, 'StringStringEntryProto'),
          },
        },
        ModelProto: {
          fields: {
            ir_version: f(1, 'int64'),
            opset_import: repeated(8, 'OperatorSetIdProto'),
            producer_name: f(2, 'string'),
            producer_version: f(3, 'string'),
            domain: f(4, 'string'),
            model_version: f(5, 'int64'),
            doc_string: f(6, 'string'),
            graph: f(7, 'GraphProto'),
            metadata_props: repeated(14, 'StringStringEntryProto'),
            training_info: repeated(20, 'TrainingInfoProto'),
            functions: repeated(25, 'FunctionProto'),
            configuration: repeated(26, 'DeviceConfigurationProto'),
          },
        },
        DeviceConfigurationProto: {
          fields: { name: f(1, 'string'), num_devices: f(2, 'int32'), device: repeated(3, 'string') },
        },
        StringStringEntryProto: {
          fields: { key: f(1, 'string'), value: f(2, 'string') },
        },
        TensorAnnotation: {
          fields: { tensor_name: f(1, 'string'), quant_parameter_tensor_names: repeated(2, 'StringStringEntryProto') },
        },
        GraphProto: {
          fields: {
            node: repeated(1, 'NodeProto'),
            name: f(2, 'string'),
            initializer: repeated(5, 'TensorProto'),
            sparse_initializer: repeated(15, 'SparseTensorProto'),
            doc_string: f(10, 'string'),
            input: repeated(11, 'ValueInfoProto'),
            output: repeated(12, 'ValueInfoProto'),
            value_info: repeated(13, 'ValueInfoProto'),
            quantization_annotation: repeated(14, 'TensorAnnotation'),
            metadata_props: repeated(16, 'StringStringEntryProto'),
          },
          reserved: [[3, 4], [6, 9]],
        },
        TensorProto: {
          fields: {
            dims: repeated(1, 'int64'),
            data_type: f(2, 'int32'),
            segment: f(3, 'Segment'),
            float_data: packed(4, 'float'),
            int32_data: packed(5, 'int32'),
            string_data: repeated(6, 'bytes'),
            int64_data: packed(7, 'int64'),
            name: f(8, 'string'),
            doc_string: f(12, 'string'),
            raw_data: f(9, 'bytes'),
            external_data: repeated(13, 'StringStringEntryProto'),
            data_location: f(14, 'DataLocation'),
            double_data: packed(10, 'double'),
            uint64_data: packed(11, 'uint64'),
            metadata_props: repeated(16, 'StringStringEntryProto'),
          },
          nested: {
            DataType: {
              values: {
                UNDEFINED: 0,
                FLOAT: 1,
                UINT8: 2,
                INT8: 3,
                UINT16: 4,
                INT16: 5,
                INT32: 6,
                INT64: 7,
                STRING: 8,
                BOOL: 9,
                FLOAT16: 10,
                DOUBLE: 11,
                UINT32: 12,
                UINT64: 13,
                COMPLEX64: 14,
                COMPLEX128: 15,
                BFLOAT16: 16,
                FLOAT8E4M3FN: 17,
                FLOAT8E4M3FNUZ: 18,
                FLOAT8E5M2: 19,
                FLOAT8E5M2FNUZ: 20,
                UINT4: 21,
                INT4: 22,
                FLOAT4E2M1: 23,
                FLOAT8E8M0: 24,
                UINT2: 25,
                INT2: 26,
              },
            },
            Segment: { fields: { begin: f(1, 'int64'), end: f(2, 'int64') } },
            DataLocation: { values: { DEFAULT: 0, EXTERNAL: 1 } },
          },
        },
        SparseTensorProto: {
          fields: { values: f(1, 'TensorProto'), indices: f(2, 'TensorProto'), dims: repeated(3, 'int64') },
        },
        TensorShapeProto: {
          fields: { dim: repeated(1, 'Dimension') },
          nested: {
            Dimension: {
              oneofs: { value: { oneof: ['dim_value', 'dim_param'] } },
              fields: { dim_value: f(1, 'int64'), dim_param: f(2, 'string'), denotation: f(3, 'string') },
            },
          },
        },
        TypeProto: {
          oneofs: { value: { oneof: ['tensor_type', 'sequence_type', 'map_type', 'optional_type', 'sparse_tensor_type', 'opaque_type'] } },
          fields: {
            tensor_type: f(1, 'Tensor'),
            sequence_type: f(4, 'Sequence'),
            map_type: f(5, 'Map'),
            optional_type: f(9, 'Optional'),
            sparse_tensor_type: f(8, 'SparseTensor'),
            opaque_type: f(7, 'Opaque'),
            denotation: f(6, 'string'),
          },
          nested: {
            Tensor: { fields: { elem_type: f(1, 'int32'), shape: f(2, 'TensorShapeProto') } },
            Sequence: { fields: { elem_type: f(1, 'TypeProto') } },
            Map: { fields: { key_type: f(1, 'int32'), value_type: f(2, 'TypeProto') } },
            Optional: { fields: { elem_type: f(1, 'TypeProto') } },
            SparseTensor: { fields: { elem_type: f(1, 'int32'), shape: f(2, 'TensorShapeProto') } },
            Opaque: { fields: { domain: f(1, 'string'), name: f(2, 'string') } },
          },
        },
        OperatorSetIdProto: {
          fields: { domain: f(1, 'string'), version: f(2, 'int64') },
        },
        OperatorStatus: { values: { EXPERIMENTAL: 0, STABLE: 1 } },
        FunctionProto: {
          fields: {
            name: f(1, 'string'),
            input: repeated(4, 'string'),
            output: repeated(5, 'string'),
            attribute: repeated(6, 'string'),
            attribute_proto: repeated(11, 'AttributeProto'),
            node: repeated(7, 'NodeProto'),
            doc_string: f(8, 'string'),
            opset_import: repeated(9, 'OperatorSetIdProto'),
            domain: f(10, 'string'),
            overload: f(13, 'string'),
            value_info: repeated(12, 'ValueInfoProto'),
            metadata_props: repeated(14, 'StringStringEntryProto'),
          },
          reserved: [[2, 3], 'since_version', 'status'],
        },
      },
    },
  },
};
