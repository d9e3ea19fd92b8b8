/* config_values.h: the kinds of value an APSMPI_* variable holds (a switch, one of a few words, a count, a format, a path, ...): how each is parsed, described and compared. */
#ifndef APSMPI_CONFIG_VALUES_H
#define APSMPI_CONFIG_VALUES_H

#include "core/config_table.h"

/* Each kind names the type of the field it fills. */
extern const apsmpi_config_kind apsmpi_config_switch;    /* int: 1, 0 and synonyms */
extern const apsmpi_config_kind apsmpi_config_scaling;   /* int: enum apsmpi_scaling */
extern const apsmpi_config_kind apsmpi_config_rounding;  /* int: 1 for stochastic */
extern const apsmpi_config_kind apsmpi_config_log_level; /* int: enum apsmpi_log_level */
extern const apsmpi_config_kind apsmpi_config_algorithm; /* int: enum apsmpi_algorithm */
extern const apsmpi_config_kind apsmpi_config_intranode; /* int: enum apsmpi_intranode */
extern const apsmpi_config_kind apsmpi_config_codec_isa; /* int: enum apsmpi_codec_isa, one this CPU has */
extern const apsmpi_config_kind apsmpi_config_count;     /* size_t: lo..hi, suffix k, m or g */
extern const apsmpi_config_kind apsmpi_config_u64;       /* uint64_t: lo..hi */
extern const apsmpi_config_kind apsmpi_config_format;    /* apsmpi_format; fp32: width 32, no compression */
extern const apsmpi_config_kind apsmpi_config_path;      /* const char *: as it is (checked where it is used) */
extern const apsmpi_config_kind apsmpi_config_fault;     /* const char *: SITE:RANK:CALL (core/fault.h) */
extern const apsmpi_config_kind apsmpi_config_node_map;  /* const char *: "0,0,1,1" (core/node_map.h) */

/* What a switch accepts, said in its error. */
#define APSMPI_ON_OFF_VALID "1, 0 (also on/off, yes/no, true/false)"

#endif
