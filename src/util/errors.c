/*
 * errors.c - tern_strerror() and tern_err_name(), generated from TERN_ERRNO_MAP.
 */
#include "tern.h"

const char *tern_strerror(int err)
{
    switch (err) {
    case TERN_OK:
        return "success";
#define ERR_TEXT(name, value, text)                                                                \
    case TERN_ERR_##name:                                                                          \
        return text;
        TERN_ERRNO_MAP(ERR_TEXT)
#undef ERR_TEXT
    }
    return "unknown error";
}

const char *tern_err_name(int err)
{
    switch (err) {
    case TERN_OK:
        return "TERN_OK";
#define ERR_NAME(name, value, text)                                                                \
    case TERN_ERR_##name:                                                                          \
        return "TERN_ERR_" #name;
        TERN_ERRNO_MAP(ERR_NAME)
#undef ERR_NAME
    }
    return "TERN_ERR_UNKNOWN";
}
