/*
 * libnofp_plugin.so: the library nofp_dlopen_late loads late. Three
 * functions deep, no frame pointers, each call used after it returns so
 * that none is a tail call.
 */
__attribute__((noinline)) static unsigned long plugin_inner(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + (unsigned long)i;
	return x;
}

__attribute__((noinline)) static unsigned long plugin_middle(unsigned long x)
{
	return plugin_inner(x + 1) * 3 + x;
}

__attribute__((visibility("default"))) unsigned long plugin_outer(unsigned long x);
__attribute__((noinline)) unsigned long plugin_outer(unsigned long x)
{
	return plugin_middle(x * 5) + 1;
}
