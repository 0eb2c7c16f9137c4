/* doca_compress.h of gotensor's fake DOCA: see fakedoca_decls.h */
#include "fakedoca_decls.h"
