// The bundled examples under the runtime (filled in when examples land).
#include <gtest/gtest.h>

#include "e2e_support.h"
