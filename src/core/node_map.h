/* node_map.h: APSMPI_TEST_NODE_OF_RANK, a list that fakes which node each world rank is on (tests, emulated clusters). */
#ifndef APSMPI_NODE_MAP_H
#define APSMPI_NODE_MAP_H

/* The map is "n0,n1,n2,...": the node number (0 to 65535) of world rank 0, 1, 2, ...
 * Returns how many ranks it names, or -1 if it is not such a list. */
int apsmpi_node_map_length(const char *map);

/* The node of world rank `rank` in a valid map, or -1 when the map names fewer ranks. */
int apsmpi_node_map_get(const char *map, int rank);

#endif
