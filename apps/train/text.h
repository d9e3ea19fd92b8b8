/* text.h: the language model's text: Debian's fortunes, split into training and validation text, one character id per byte. */
#ifndef TRAIN_TEXT_H
#define TRAIN_TEXT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Where Debian's package fortunes (and fortunes-min) puts its English fortune files. */
#define TEXT_DEFAULT_DIR "/usr/share/games/fortunes"
/* The vocabulary: 0 any other byte, 1 newline, 2 tab, 3.. the printable ASCII ' '..'~'. */
#define TEXT_VOCAB 98
/* Fortune k (counted over all files in name order, from 0) is validation text when
 * k % TEXT_VAL_EVERY == TEXT_VAL_EVERY - 1, training text otherwise. */
#define TEXT_VAL_EVERY 10

struct text_corpus {
    uint8_t *train, *val; /* character ids, each fortune followed by "%\n" as in the files */
    size_t ntrain, nval;
    int files;
    long fortunes;
};

/* Collective over comm: rank 0 reads every regular file of DIR except the *.dat indexes
 * (links are skipped: fortunes' *.u8 links name the same files), in byte order of their
 * names, cuts each into fortunes at the lines that hold only "%", splits them as above and
 * broadcasts both texts. Returns 0 on every rank, or -1 on every rank with rank 0's
 * one-line reason in err. */
int text_load(const char *dir, struct text_corpus *c, MPI_Comm comm, char *err, size_t errlen);
void text_free(struct text_corpus *c);
/* Rank 0's part of text_load, without MPI: reads, cuts and splits DIR's files into c.
 * Returns 0, or -1 with a one-line reason in err. */
int text_read_dir(const char *dir, struct text_corpus *c, char *err, size_t errlen);

/* The id of a byte, and the byte an id stands for ('?' for "other"). */
int text_id(unsigned char byte);
char text_char(int id);

/* A window of the text: x[t] = text[start + t], y[t] = text[start + t + 1] for t < len. */
void text_window(const uint8_t *text, size_t start, int len, int *x, int *y);

#endif
