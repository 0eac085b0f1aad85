// The shared consumer program (one copy for all four projects).
#include "../consumer.cpp"
