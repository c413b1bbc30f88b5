//! The reference server's retrieval engine: small, deterministic and real.
//!
//! - dense: hashed character-trigram vectors (signed feature hashing), L2
//!   normalised, compared by cosine;
//! - sparse: BM25 (k1 = 1.2, b = 0.75) over word tokens;
//! - hybrid: reciprocal rank fusion of the two rankings (spec §16.3 formula,
//!   rrfK 60 by default), or min-max weighted fusion;
//! - rerank: a cross-encoder stand-in reading query and passage together
//!   (term coverage, bigram overlap and cosine);
//! - sparse and multi-vector embeddings for `embed/sparse` and `embed/multi`.
//!
//! Every score is finite and every ordering breaks ties by document position,
//! so the same request over the same index always gives the same answer
//! (`retrieve.deterministic`, spec §7.7.1).

use super::corpus::CORPUS;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Dimension of the dense vectors.
pub(super) const DENSE_DIM: usize = 256;
/// Dimension of each token vector of `embed/multi`.
pub(super) const MULTI_DIM: usize = 64;
/// Size of the hashed vocabulary of `embed/sparse`.
pub(super) const SPARSE_VOCABULARY: u64 = 1 << 20;
/// Most rows one `embed/multi` matrix carries.
const MAX_MATRIX_ROWS: usize = 128;

const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// Words too common to carry meaning; dropped by the tokenizer.
const STOPWORDS: [&str; 24] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "so", "such", "that", "the", "to", "with",
];

/// FNV-1a, 64 bits: a stable hash so vectors do not change between runs or
/// builds (std's hasher is randomly keyed).
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Lower-cased word tokens without stopwords.
pub(super) fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Adds the signed, hashed character trigrams of `token` to `vector`.
fn add_trigrams(vector: &mut [f32], token: &str) {
    let dim = vector.len() as u64;
    let padded: Vec<char> = format!("#{token}#").chars().collect();
    let mut add = |feature: &str| {
        let h = fnv1a(feature.as_bytes());
        let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
        // The index stays below `dim`, which is a usize.
        let i = usize::try_from(h % dim).unwrap_or(0);
        vector[i] += sign;
    };
    for window in padded.windows(3) {
        add(&window.iter().collect::<String>());
    }
    add(&format!("w:{token}"));
}

fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in vector.iter_mut() {
            *x /= norm;
        }
    }
}

/// The dense embedding of a text: normalised, so a dot product is the cosine.
pub(super) fn dense_vector(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0; DENSE_DIM];
    for token in tokens(text) {
        add_trigrams(&mut vector, &token);
    }
    normalize(&mut vector);
    vector
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum()
}

/// One matrix row per token (at most [`MAX_MATRIX_ROWS`]): late-interaction
/// embeddings for `embed/multi` (spec §7.5).
pub(super) fn token_matrix(text: &str) -> Vec<Vec<f32>> {
    tokens(text)
        .into_iter()
        .take(MAX_MATRIX_ROWS)
        .map(|token| {
            let mut row = vec![0.0; MULTI_DIM];
            add_trigrams(&mut row, &token);
            normalize(&mut row);
            row
        })
        .collect()
}

/// Rounds a score for the wire: stable text, and never NaN or infinite (spec §4.6).
pub(super) fn wire_score(score: f64) -> f64 {
    if score.is_finite() {
        (score * 1_000_000.0).round() / 1_000_000.0
    } else {
        0.0
    }
}

/// An indexed document.
#[derive(Debug, Clone)]
pub(super) struct Doc {
    pub id: String,
    pub title: String,
    pub text: String,
    pub meta: Map<String, Value>,
    /// Part of the built-in corpus: read-only, cited as trusted.
    pub builtin: bool,
    tf: HashMap<String, u32>,
    len: usize,
    dense: Vec<f32>,
}

impl Doc {
    pub fn new(id: String, title: String, text: String, meta: Map<String, Value>) -> Self {
        let words = tokens(&text);
        let mut tf = HashMap::new();
        for w in &words {
            *tf.entry(w.clone()).or_insert(0) += 1;
        }
        let dense = dense_vector(&text);
        Self {
            id,
            title,
            text,
            meta,
            builtin: false,
            len: words.len(),
            tf,
            dense,
        }
    }

    pub fn dense(&self) -> &[f32] {
        &self.dense
    }

    pub fn tags(&self) -> BTreeSet<&str> {
        self.meta
            .get("tags")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// How to fuse the dense and sparse rankings in hybrid mode (spec §7.7).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Fusion {
    Rrf {
        k: f64,
    },
    /// Min-max normalised scores, weighted (spec §16.3).
    Weighted {
        dense: f64,
        sparse: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Dense,
    Sparse,
    Hybrid,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "dense" => Some(Self::Dense),
            "sparse" => Some(Self::Sparse),
            "hybrid" => Some(Self::Hybrid),
            _ => None,
        }
    }
}

/// A document's place in a ranking, with the per-stage scores (`Hit.scores`).
#[derive(Debug, Clone)]
pub(super) struct Scored {
    pub doc: usize,
    pub score: f64,
    pub stages: BTreeMap<&'static str, f64>,
}

/// The index: the built-in corpus plus documents added with `index/add`.
#[derive(Debug, Clone)]
pub(super) struct Index {
    docs: Vec<Doc>,
    df: HashMap<String, u32>,
    total_len: usize,
    /// Bumped by every write; names the snapshot (`indexVersion`).
    generation: u64,
}

impl Default for Index {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Index {
    /// The built-in corpus.
    pub fn builtin() -> Self {
        let mut index = Self {
            docs: Vec::new(),
            df: HashMap::new(),
            total_len: 0,
            generation: 1,
        };
        for p in CORPUS {
            let meta = json!({"lang": p.lang, "year": p.year, "tags": p.tags});
            let meta = meta.as_object().cloned().unwrap_or_default();
            let mut doc = Doc::new(p.id.to_owned(), p.title.to_owned(), p.text.to_owned(), meta);
            doc.builtin = true;
            index.insert(doc);
        }
        index
    }

    pub fn docs(&self) -> &[Doc] {
        &self.docs
    }

    pub fn doc(&self, i: usize) -> Option<&Doc> {
        self.docs.get(i)
    }

    pub fn position(&self, id: &str) -> Option<usize> {
        self.docs.iter().position(|d| d.id == id)
    }

    /// The snapshot id served now (spec §7.7.1).
    pub fn version(&self) -> String {
        format!("reference-corpus-{}", self.generation)
    }

    pub fn added(&self) -> usize {
        self.docs.iter().filter(|d| !d.builtin).count()
    }

    fn insert(&mut self, doc: Doc) {
        for term in doc.tf.keys() {
            *self.df.entry(term.clone()).or_insert(0) += 1;
        }
        self.total_len += doc.len;
        self.docs.push(doc);
    }

    fn remove_at(&mut self, i: usize) -> Doc {
        let doc = self.docs.remove(i);
        for term in doc.tf.keys() {
            if let Some(n) = self.df.get_mut(term) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.df.remove(term);
                }
            }
        }
        self.total_len = self.total_len.saturating_sub(doc.len);
        doc
    }

    /// Adds or replaces (upsert by id) a document.
    pub fn upsert(&mut self, doc: Doc) {
        if let Some(i) = self.position(&doc.id) {
            self.remove_at(i);
        }
        self.insert(doc);
        self.generation += 1;
    }

    /// Removes a document; true when it was there.
    pub fn delete(&mut self, id: &str) -> bool {
        match self.position(id) {
            Some(i) => {
                self.remove_at(i);
                self.generation += 1;
                true
            }
            None => false,
        }
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.docs.len() as f64;
        let df = f64::from(self.df.get(term).copied().unwrap_or(0));
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25 of every document sharing a term with the query, best first.
    pub fn sparse(&self, query: &str) -> Vec<Scored> {
        let terms: BTreeSet<String> = tokens(query).into_iter().collect();
        let avg = if self.docs.is_empty() {
            1.0
        } else {
            (self.total_len as f64 / self.docs.len() as f64).max(1.0)
        };
        let mut scored: Vec<Scored> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let score: f64 = terms
                    .iter()
                    .filter_map(|t| doc.tf.get(t).map(|tf| (t, f64::from(*tf))))
                    .map(|(t, tf)| {
                        let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * doc.len as f64 / avg);
                        self.idf(t) * tf * (BM25_K1 + 1.0) / (tf + norm)
                    })
                    .sum();
                (score > 0.0).then(|| Scored {
                    doc: i,
                    score,
                    stages: BTreeMap::from([("sparse", score)]),
                })
            })
            .collect();
        sort(&mut scored);
        scored
    }

    /// Cosine of every document with the query, best first.
    pub fn dense(&self, query: &str) -> Vec<Scored> {
        let q = dense_vector(query);
        let mut scored: Vec<Scored> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, doc)| {
                let score = dot(&q, &doc.dense);
                Scored {
                    doc: i,
                    score,
                    stages: BTreeMap::from([("dense", score)]),
                }
            })
            .collect();
        sort(&mut scored);
        scored
    }

    /// Dense and sparse rankings fused (spec §16.3).
    pub fn hybrid(&self, query: &str, fusion: Fusion) -> Vec<Scored> {
        let dense = self.dense(query);
        let sparse = self.sparse(query);
        let mut fused: BTreeMap<usize, Scored> = BTreeMap::new();
        let mut add = |list: &[Scored], stage: &'static str, weight: f64| {
            let (min, max) = list.iter().fold((f64::MAX, f64::MIN), |(lo, hi), s| {
                (lo.min(s.score), hi.max(s.score))
            });
            for (rank, s) in list.iter().enumerate() {
                let contribution = match fusion {
                    Fusion::Rrf { k } => 1.0 / (k + rank as f64 + 1.0),
                    Fusion::Weighted { .. } if max > min => weight * (s.score - min) / (max - min),
                    Fusion::Weighted { .. } => weight,
                };
                let entry = fused.entry(s.doc).or_insert_with(|| Scored {
                    doc: s.doc,
                    score: 0.0,
                    stages: BTreeMap::new(),
                });
                entry.score += contribution;
                entry.stages.insert(stage, s.score);
            }
        };
        let (wd, ws) = match fusion {
            Fusion::Rrf { .. } => (1.0, 1.0),
            Fusion::Weighted { dense, sparse } => (dense, sparse),
        };
        add(&dense, "dense", wd);
        add(&sparse, "sparse", ws);
        let mut scored: Vec<Scored> = fused.into_values().collect();
        sort(&mut scored);
        scored
    }

    pub fn rank(&self, query: &str, mode: Mode, fusion: Fusion) -> Vec<Scored> {
        match mode {
            Mode::Dense => self.dense(query),
            Mode::Sparse => self.sparse(query),
            Mode::Hybrid => self.hybrid(query, fusion),
        }
    }

    /// Sparse (SPLADE-shaped) weights of a text over the hashed vocabulary:
    /// term frequency times the corpus idf, indices ascending and unique.
    pub fn sparse_embedding(&self, text: &str) -> (Vec<u64>, Vec<f64>) {
        let mut weights: BTreeMap<u64, f64> = BTreeMap::new();
        for term in tokens(text) {
            let index = fnv1a(term.as_bytes()) % SPARSE_VOCABULARY;
            *weights.entry(index).or_insert(0.0) += self.idf(&term);
        }
        weights.into_iter().map(|(i, w)| (i, wire_score(w))).unzip()
    }
}

/// Best first; ties by document position so orderings are stable.
fn sort(scored: &mut [Scored]) {
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
}

/// A cross-encoder stand-in: reads the query and the passage together. Term
/// coverage, then adjacent-pair overlap, then the dense cosine.
pub(super) fn rerank_score(query: &str, passage: &str) -> f64 {
    let q = tokens(query);
    let p = tokens(passage);
    if q.is_empty() {
        return 0.0;
    }
    let p_terms: BTreeSet<&str> = p.iter().map(String::as_str).collect();
    let q_terms: BTreeSet<&str> = q.iter().map(String::as_str).collect();
    let coverage =
        q_terms.iter().filter(|t| p_terms.contains(*t)).count() as f64 / q_terms.len() as f64;
    let pairs = |words: &[String]| -> BTreeSet<(String, String)> {
        words
            .windows(2)
            .map(|w| (w[0].clone(), w[1].clone()))
            .collect()
    };
    let (qp, pp) = (pairs(&q), pairs(&p));
    let bigrams = if qp.is_empty() {
        0.0
    } else {
        qp.intersection(&pp).count() as f64 / qp.len() as f64
    };
    let cosine = dot(&dense_vector(query), &dense_vector(passage));
    0.5 * coverage + 0.2 * bigrams + 0.3 * cosine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_vectors_are_normalised_and_deterministic() {
        let a = dense_vector("hybrid retrieval with fusion");
        let b = dense_vector("hybrid retrieval with fusion");
        assert_eq!(a, b);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        let near = dot(&a, &dense_vector("fusing hybrid rankings"));
        let far = dot(&a, &dense_vector("zebra quilt volcano"));
        assert!(near > far, "{near} vs {far}");
    }

    #[test]
    fn each_mode_ranks_the_obvious_passage_first() {
        let index = Index::builtin();
        for mode in [Mode::Dense, Mode::Sparse, Mode::Hybrid] {
            let ranked = index.rank(
                "reciprocal rank fusion adds sixty plus the rank",
                mode,
                Fusion::Rrf { k: 60.0 },
            );
            assert_eq!(index.docs()[ranked[0].doc].id, "ref-15", "{mode:?}");
            assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
        }
        assert!(
            index.sparse("zzzz qqqq").is_empty(),
            "BM25 finds nothing for unknown words"
        );
    }

    #[test]
    fn writes_change_the_snapshot_and_are_found() {
        let mut index = Index::builtin();
        let before = index.version();
        let doc = Doc::new(
            "protocheck-probe/x".into(),
            String::new(),
            "an unmistakable quokka passage".into(),
            Map::new(),
        );
        index.upsert(doc);
        assert_ne!(index.version(), before);
        let hit = &index.sparse("quokka")[0];
        assert_eq!(index.docs()[hit.doc].id, "protocheck-probe/x");
        assert!(index.delete("protocheck-probe/x"));
        assert!(!index.delete("protocheck-probe/x"));
        assert!(index.sparse("quokka").is_empty());
    }

    #[test]
    fn rerank_prefers_the_passage_that_answers() {
        let q = "cross-encoder reranker";
        let good = rerank_score(q, CORPUS[3].text);
        let bad = rerank_score(q, CORPUS[8].text);
        assert!(good > bad, "{good} vs {bad}");
    }

    #[test]
    fn sparse_embeddings_have_unique_sorted_indices() {
        let index = Index::builtin();
        let (indices, values) = index.sparse_embedding("dense dense sparse retrieval");
        assert_eq!(indices.len(), values.len());
        assert!(indices.windows(2).all(|w| w[0] < w[1]));
        assert!(indices.iter().all(|i| *i < SPARSE_VOCABULARY));
    }
}
