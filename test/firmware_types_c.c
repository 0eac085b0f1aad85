/* The firmware-style header is C: compiled here as C11, as a firmware build would. */
#include "firmware_types.h"

_Static_assert(sizeof(vnnx_subgraph_node_t) == 492, "node record size");
_Static_assert(sizeof(vnnx_layer_t) == 300, "layer record size");
_Static_assert(sizeof(vnnx_graph_t) == 84, "graph record size");
