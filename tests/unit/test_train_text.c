/* test_train_text.c: the language model's text: files read in name order, fortunes cut at "%" lines, every tenth kept for validation, bytes mapped to character ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

static char dir[] = "/tmp/apsmpi_text_XXXXXX";

static void write_file(const char *name, const char *content)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

/* The ids of a string, as the corpus holds them. */
static void encode(const char *s, uint8_t *out)
{
    for (size_t i = 0; s[i]; i++)
        out[i] = (uint8_t)text_id((unsigned char)s[i]);
}

static void test_vocabulary(void **state)
{
    assert_int_equal(text_id('\n'), 1);
    assert_int_equal(text_id('\t'), 2);
    assert_int_equal(text_id(' '), 3);
    assert_int_equal(text_id('~'), TEXT_VOCAB - 1);
    assert_int_equal(text_id(0xc3), 0);
    assert_int_equal(text_id('\b'), 0);
    for (int b = 0; b < 256; b++) {
        int id = text_id((unsigned char)b);
        assert_true(id >= 0 && id < TEXT_VOCAB);
        if (id)
            assert_int_equal((unsigned char)text_char(id), b);
    }
}

/* Twelve fortunes in two files (b's last one without a closing "%", an empty one between
 * two "%" lines that does not count): fortune 9 in name order, "j", is the validation text. */
static void test_split(void **state)
{
    struct text_corpus c;
    char err[256];
    uint8_t want[256];
    const char *train = "a\n%\nb1\nb2\n%\nc\n%\nd\n%\ne\n%\nf\n%\ng\n%\nh\t\xc3\xa9\n%\ni\n%\nk\n%\nl\n%\n";

    assert_non_null(mkdtemp(dir));
    write_file("a", "a\n%\nb1\nb2\n%\nc\n%\nd\n%\ne\n%\n");
    write_file("a.dat", "an index: not text");
    write_file("b", "f\n%\n%\ng\n%\nh\t\xc3\xa9\n%\ni\n%\nj\n%\nk\n%\nl\n");
    {
        char path[256];
        snprintf(path, sizeof path, "%s/a.u8", dir);
        assert_int_equal(symlink("a", path), 0);
    }
    assert_int_equal(text_read_dir(dir, &c, err, sizeof err), 0);
    assert_int_equal(c.files, 2);
    assert_int_equal(c.fortunes, 12);
    assert_int_equal(c.ntrain, strlen(train));
    encode(train, want);
    assert_memory_equal(c.train, want, c.ntrain);
    assert_int_equal(c.nval, 4);
    encode("j\n%\n", want);
    assert_memory_equal(c.val, want, c.nval);
    text_free(&c);
}

static void test_missing_dir(void **state)
{
    struct text_corpus c;
    char err[256];
    assert_int_equal(text_read_dir("/nonexistent/fortunes", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/fortunes"));
}

static void test_window(void **state)
{
    const uint8_t text[] = {5, 6, 7, 8, 9};
    int x[3], y[3];
    text_window(text, 1, 3, x, y);
    assert_int_equal(x[0], 6);
    assert_int_equal(x[2], 8);
    assert_int_equal(y[0], 7);
    assert_int_equal(y[2], 9);
}

static int cleanup(void **state)
{
    const char *names[] = {"a", "a.dat", "a.u8", "b"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vocabulary),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_missing_dir),
        cmocka_unit_test(test_window),
    };
    return cmocka_run_group_tests(tests, NULL, cleanup);
}
